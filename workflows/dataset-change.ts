import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DatasetChangeInput, DatasetChangeItem, DatasetChangeResult } from '../contracts/datasets.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

const act = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

/**
 * Accepted suggestions or an undo, in a protected environment: the gate waits for another
 * person's approval, then the write runs exactly as the API runs it elsewhere.
 */
export async function datasetChangeWorkflow(input: DatasetChangeInput): Promise<DatasetChangeResult> {
  const what =
    input.operation.type === 'accept'
      ? `accepting suggestions for dataset ${input.datasetId}`
      : `undoing change ${input.operation.changeId}`;
  return runAsTask(
    async () => {
      await reportTaskProgress({ done: 0, total: 1, message: what });
      let item: DatasetChangeItem;
      try {
        item = await act.applyDatasetChange(input);
      } catch (err) {
        item = {
          kind: 'dataset',
          id: input.datasetId,
          title: null,
          status: 'failed',
          outcome: 'failed',
          change_id: null,
          ...failureOf(err, 'write'),
        };
      }
      await reportTaskProgress({ done: 1, total: 1, message: item.status });
      const result: DatasetChangeResult = {
        env_id: input.envId,
        operation: input.operation.type,
        items: [item],
        not_started: 0,
        cancelled: false,
        next_actions: [],
      };
      if (item.outcome === 'failed') await endTaskWithResult('FAILED', result, item.error ?? `${what} failed`, 'DatasetChangeFailed');
      return result;
    },
    { gate: { approval: input.approval, what } },
  );
}
