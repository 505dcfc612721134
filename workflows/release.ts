import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  condition,
  log,
  proxyActivities,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ReleaseDecisionOutcome, ReleasePublishInput, ReleasePublishResult, ReleaseItem } from '../contracts/clean-release.ts';
import { countOutcomes } from '../contracts/outcomes.ts';
import { releaseDecisionsQuery, releaseDecisionUpdate } from '../contracts/workflow-messages.ts';
import { endTaskWithResult, runAsTask } from './task-run.ts';

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds', maximumAttempts: 5 },
});
const work = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 4 },
});

/** The browser check of a published dashboard: one at a time, within its time budget. */
const browserCheck = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '20 seconds', maximumAttempts: 2 },
});

/**
 * A release candidate's decisions, one workflow per candidate (`release-<id>`): approve, reject,
 * publish and revoke arrive as updates, so each caller gets its outcome at once and the history
 * records who decided what. The database holds the candidate's state (each decision is one
 * conditional change there); a publish or revoke runs as its own task, a child of this workflow.
 * It ends once the candidate is rejected or revoked.
 */
export async function releaseWorkflow(input: { candidateId: string }): Promise<ReleaseDecisionOutcome[]> {
  const decided: ReleaseDecisionOutcome[] = [];
  let busy = false;
  setHandler(releaseDecisionsQuery, () => decided);
  setHandler(releaseDecisionUpdate, async (d) => {
    // One decision at a time: the next waits for the previous to be applied.
    await condition(() => !busy);
    busy = true;
    try {
      const outcome = await bookkeeping.applyReleaseDecision({ ...d, candidateId: input.candidateId, decisionId: uuid4() });
      const { publish, ...answer } = outcome;
      if (publish && answer.task_id) {
        await startChild(releasePublishWorkflow, {
          workflowId: answer.task_id,
          args: [publish],
          taskQueue: workflowInfo().taskQueue,
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdConflictPolicy: 'USE_EXISTING',
        } as never);
      }
      log.info(`${d.action} by ${d.username ?? 'unknown'}: candidate is ${answer.state}`);
      decided.push(answer);
      return answer;
    } catch (err) {
      // The activity's refusal (wrong state, self-approval) is this update's failure, as it was raised.
      if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
      throw err;
    } finally {
      busy = false;
    }
  });
  await condition(() => decided.some((d) => d.state === 'rejected' || d.state === 'revoked'));
  await condition(() => !busy);
  return decided;
}

/** Publishes a candidate's manifest into its target, or revokes a publish: one dashboard at a time, each with its own outcome. */
export async function releasePublishWorkflow(input: ReleasePublishInput): Promise<ReleasePublishResult> {
  return runAsTask(
    async () => {
      const items = [];
      let position = 0;
      try {
        for (const uuid of input.dashboardUuids) {
          const item =
            input.mode === 'publish'
              ? await work.publishReleaseArtifact({ candidateId: input.candidateId, dashboardUuid: uuid, position: ++position })
              : await work.revokeReleaseArtifact({ candidateId: input.candidateId, dashboardUuid: uuid });
          items.push(input.verification === 'browser' ? await browserChecked(input, item) : item);
        }
      } catch (err) {
        // The candidate must not stay "publishing" behind a task that ended.
        await CancellationScope.nonCancellable(() =>
          bookkeeping.settleRelease({ candidateId: input.candidateId, mode: input.mode, failed: 1 }),
        );
        throw err;
      }
      const failed = countOutcomes(items).failed;
      await bookkeeping.settleRelease({ candidateId: input.candidateId, mode: input.mode, failed });
      const result: ReleasePublishResult = {
        candidate_id: input.candidateId,
        mode: input.mode,
        items,
        not_started: 0,
        cancelled: false,
        next_actions: [],
      };
      if (failed)
        await endTaskWithResult(
          'FAILED',
          result,
          `${failed} of ${items.length} dashboard(s) could not be ${input.mode === 'publish' ? 'published' : 'revoked'}`,
        );
      return result;
    },
    {
      gate: {
        approval: input.approval,
        what: `${input.mode === 'publish' ? 'publishing' : 'revoking'} release candidate ${input.candidateId}`,
        // The candidate must not stay "publishing" behind a task that never ran.
        onDenied: () => bookkeeping.settleRelease({ candidateId: input.candidateId, mode: input.mode, failed: 1 }),
      },
    },
  );
}

/**
 * A published dashboard opened in the target's Superset (`verification: "browser"`): held to the
 * target alone (an artifact has no live source to render beside it), a chart that shows an error
 * fails the item; a browser that cannot reach Superset leaves it published, `not_verifiable`.
 */
async function browserChecked(input: ReleasePublishInput, item: ReleaseItem): Promise<ReleaseItem> {
  if (item.status !== 'published' || item.target_dashboard_id === null) return item;
  const browser = await browserCheck.browserCheckDashboard({ targetEnvId: input.targetEnvId, dashboardId: item.target_dashboard_id });
  if (browser.verdict !== 'failed') return { ...item, browser };
  return {
    ...item,
    browser,
    status: 'failed',
    outcome: 'failed',
    step: 'verify',
    error: `published, but the browser check failed: ${browser.reason}`,
  };
}

/** The `release_check` task: runs every check and persists the report. */
export async function releaseCheckWorkflow(input: { candidateId: string; reportId: string }) {
  return runAsTask(() => work.runReleaseChecks(input));
}
