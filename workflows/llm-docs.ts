import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { LlmDocsInput, LlmDocsItem, LlmDocsResult, Tokens } from '../contracts/datasets.ts';
import { NON_RETRYABLE_FAILURE_TYPES, type ItemFailure } from '../contracts/failures.ts';
import { forEachItem } from './for-each-item.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

/** The provider's own failures are retried inside the activity (with its policy); Temporal retries outages of Superset or a lost worker. */
const perDataset = proxyActivities<Activities>({
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

/**
 * Asks an LLM for dataset and column descriptions, one dataset at a time, and stores them as
 * suggestions: nothing reaches Superset until a person accepts them. One dataset failing never
 * fails its siblings; the result gives per-dataset outcomes, tokens and time.
 */
export async function llmDocsWorkflow(input: LlmDocsInput): Promise<LlmDocsResult> {
  return runAsTask(async () => {
    const total = input.datasetIds.length;
    await reportTaskProgress({ done: 0, total, message: `documenting ${total} dataset(s)` });

    let provider = { id: input.providerId, name: input.providerId, model: '' };
    let promptVersion = '';
    let providerFailure: ItemFailure | undefined;
    try {
      ({ promptVersion, ...provider } = await perDataset.describeLlmProvider({ providerId: input.providerId }));
    } catch (err) {
      providerFailure = failureOf(err, 'provider');
      log.error(`the LLM provider cannot be used: ${providerFailure.error}`);
    }

    const { items, cancelled } = await forEachItem(
      input.datasetIds,
      (id) => `dataset ${id}`,
      async (datasetId) => {
        if (providerFailure) return failedItem(datasetId, providerFailure);
        try {
          return await perDataset.documentDataset({
            envId: input.envId,
            datasetId,
            providerId: input.providerId,
            language: input.language,
          });
        } catch (err) {
          return failedItem(datasetId, failureOf(err, 'generate'));
        }
      },
    );

    const failed = items.filter((i) => i.status === 'failed');
    const result = resultOf(input, { provider, promptVersion }, items, cancelled);
    if (cancelled) await endTaskWithResult('CANCELLED', result, `cancelled after ${items.length} of ${total} datasets`);
    if (failed.length) {
      await endTaskWithResult(
        'FAILED',
        result,
        `${failed.length} of ${total} dataset(s) got no suggestions: ${failed.map((f) => `${f.id} (${f.error})`).join('; ')}`,
        'LlmDocsIncomplete',
      );
    }
    return result;
  });
}

/** The task's result: each dataset's outcome, and the totals over them (tokens and time summed). */
function resultOf(
  input: LlmDocsInput,
  used: { provider: LlmDocsResult['provider']; promptVersion: string },
  items: LlmDocsItem[],
  cancelled: boolean,
): LlmDocsResult {
  const total = input.datasetIds.length;
  const tokens: Tokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const it of items) {
    tokens.prompt_tokens += it.tokens.prompt_tokens;
    tokens.completion_tokens += it.tokens.completion_tokens;
    tokens.total_tokens += it.tokens.total_tokens;
  }
  const failed = items.filter((i) => i.status === 'failed');
  return {
    env_id: input.envId,
    provider: used.provider,
    language: input.language,
    prompt_version: used.promptVersion,
    totals: {
      requested: total,
      suggested: items.length - failed.length,
      failed: failed.length,
      suggestions: items.reduce((n, i) => n + i.suggestions, 0),
      tokens,
      duration_ms: items.reduce((n, i) => n + i.duration_ms, 0),
    },
    items,
    not_started: total - items.length,
    cancelled,
    next_actions: [],
  };
}

function failedItem(datasetId: number, failure: ItemFailure): LlmDocsItem {
  return {
    kind: 'dataset',
    id: datasetId,
    title: null,
    status: 'failed',
    outcome: 'failed',
    suggestions: 0,
    tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    duration_ms: 0,
    attempts: 0,
    sample_values_sent: false,
    ...failure,
  };
}
