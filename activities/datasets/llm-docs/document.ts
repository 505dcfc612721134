import { Context } from '@temporalio/activity';
import type { DocsLanguage, LlmDocsItem, Tokens } from '../../../contracts/datasets.ts';
import type { ItemFailure } from '../../../contracts/failures.ts';
import type { NewSuggestion } from '../../../db/datasets/suggestions.ts';
import type { LlmConnection } from '../../../db/llm-providers/store.ts';
import { egressPolicy } from '../../../lib/egress/policy.ts';
import { completeStructured, LlmError, type StructuredAnswer } from '../../../lib/llm/chat.ts';
import { docsMessages, docsSchema, PROMPT_VERSION, type DatasetContext, type DocsAnswer } from '../../../lib/llm/dataset-docs.ts';
import { sameValue } from '../../../lib/superset/dataset-edit.ts';
import type { DatasetDetail } from '../../../lib/superset/types.ts';
import { itemFailure } from '../../../domain/failures/index.ts';
import { currentTaskId } from '../../task-context.ts';
import { contextOf } from './context.ts';
import { llmActions, provider, type LlmDocsDeps } from './provider.ts';

const NO_TOKENS: Tokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

export interface DocumentDatasetInput {
  envId: string;
  datasetId: number;
  providerId: string;
  language: DocsLanguage;
}

/** One dataset's documentation under way: its item so far, and how it fails (logged, with its duration). */
interface Run {
  input: DocumentDatasetInput;
  /** "dataset <id>", for log lines and failures. */
  item: string;
  base: LlmDocsItem;
  started: number;
  fail(failure: ItemFailure, extra?: Partial<LlmDocsItem>): LlmDocsItem;
}

/**
 * Gathers the dataset's context, asks the provider for descriptions as structured JSON, and
 * stores them as suggestions for a person to review. Nothing is written to Superset here. A
 * retry finds the suggestions an earlier attempt stored.
 */
export async function documentDataset(deps: LlmDocsDeps, input: DocumentDatasetInput): Promise<LlmDocsItem> {
  const beat = setInterval(() => Context.current().heartbeat(), 3000);
  try {
    return await documentOne(deps, input);
  } finally {
    clearInterval(beat);
  }
}

async function documentOne(deps: LlmDocsDeps, input: DocumentDatasetInput): Promise<LlmDocsItem> {
  const { log } = Context.current();
  const run = startRun(input);
  const already = await deps.stores.datasetSuggestions.countForTask(currentTaskId(), input.datasetId);
  if (already > 0) {
    log.info(`${run.item}: an earlier attempt of this task already stored ${already} suggestion(s)`);
    return { ...run.base, status: 'suggested', outcome: 'succeeded', suggestions: already, duration_ms: Date.now() - run.started };
  }
  const conn = await provider(deps, input.providerId);
  const read = await readDataset(deps, conn, run);
  if ('failed' in read) return read.failed;
  const answer = await generate(deps, conn, read, run);
  if ('failed' in answer) return answer.failed;
  return storeSuggestions(deps, conn, read.detail, answer, run);
}

function startRun(input: DocumentDatasetInput): Run {
  const run: Run = {
    input,
    item: `dataset ${input.datasetId}`,
    base: {
      kind: 'dataset',
      id: input.datasetId,
      title: null,
      status: 'failed',
      outcome: 'failed',
      next_actions: [],
      suggestions: 0,
      tokens: NO_TOKENS,
      duration_ms: 0,
      attempts: 0,
      sample_values_sent: false,
    },
    started: Date.now(),
    fail: (failure, extra = {}) => {
      Context.current().log.error(`${run.item}${run.base.title ? ` ('${run.base.title}')` : ''}: ${failure.error}`);
      return { ...run.base, ...extra, status: 'failed', outcome: 'failed', duration_ms: Date.now() - run.started, ...failure };
    },
  };
  return run;
}

/** The dataset from Superset and what the model may see of it (sample values only for an environment the provider may see). */
async function readDataset(
  deps: LlmDocsDeps,
  conn: LlmConnection,
  run: Run,
): Promise<{ detail: DatasetDetail; context: DatasetContext } | { failed: LlmDocsItem }> {
  const { input } = run;
  const at = { step: 'read' };
  try {
    const client = await deps.superset(input.envId);
    const detail = await client.datasets.get(input.datasetId);
    run.base.title = detail.table_name;
    at.step = 'context';
    const allowed = conn.sampleDataEnvIds.includes(input.envId);
    const context = await contextOf(client, detail, allowed, Context.current().log);
    run.base.sample_values_sent = context.columns.some((c) => (c.sample_values?.length ?? 0) > 0);
    return { detail, context };
  } catch (err) {
    return {
      failed: run.fail(
        itemFailure(err, { step: at.step, item: run.item, envId: input.envId, listPath: `/api/datasets?env_id=${input.envId}` }),
      ),
    };
  }
}

/** The provider's answer; a provider failure is this dataset's (with the tokens and attempts it cost). */
async function generate(
  deps: LlmDocsDeps,
  conn: LlmConnection,
  read: { detail: DatasetDetail; context: DatasetContext },
  run: Run,
): Promise<StructuredAnswer<DocsAnswer> | { failed: LlmDocsItem }> {
  const ctx = Context.current();
  const { log } = ctx;
  try {
    return await completeStructured(
      {
        baseUrl: conn.baseUrl,
        apiKey: conn.apiKey,
        model: conn.model,
        timeoutSeconds: conn.timeoutSeconds,
        egress: egressPolicy(deps.config),
      },
      docsMessages(read.context, run.input.language),
      docsSchema(read.detail.columns.map((c) => c.column_name)),
      deps.llmPolicy,
      {
        heartbeat: () => ctx.heartbeat(),
        signal: ctx.cancellationSignal,
        onAttempt: (e) => {
          const line = `${run.item}: provider '${conn.name}' attempt ${e.attempt}: ${e.outcome} (${e.detail})`;
          if (e.outcome === 'answered') log.info(line);
          else log.warn(line);
        },
      },
    );
  } catch (err) {
    if (!(err instanceof LlmError)) throw err;
    return {
      failed: run.fail(
        {
          step: 'generate',
          error: `${conn.name} (${conn.model}): ${err.message}`,
          ...(err.status || err.providerMessage
            ? {
                upstream_error: {
                  ...(err.status ? { status: err.status } : {}),
                  message: err.providerMessage ?? err.message,
                  type: err.kind,
                },
              }
            : {}),
          next_actions: llmActions(err, conn),
        },
        { tokens: err.usage, attempts: err.attempts },
      ),
    };
  }
}

/** The descriptions that differ from the current ones, stored as the task's suggestions; the dataset's item. */
async function storeSuggestions(
  deps: LlmDocsDeps,
  conn: LlmConnection,
  detail: DatasetDetail,
  answer: StructuredAnswer<DocsAnswer>,
  run: Run,
): Promise<LlmDocsItem> {
  const { input } = run;
  const items: NewSuggestion[] = [];
  const currentDesc = detail.description ?? null;
  if (!sameValue(currentDesc, answer.value.dataset_description)) {
    items.push({
      target: 'dataset',
      column_name: null,
      field: 'description',
      value: answer.value.dataset_description,
      base_value: currentDesc,
    });
  }
  for (const c of answer.value.columns) {
    const col = detail.columns.find((x) => x.column_name === c.column_name);
    const current = (col?.description as string | null | undefined) ?? null;
    if (!sameValue(current, c.description))
      items.push({ target: 'column', column_name: c.column_name, field: 'description', value: c.description, base_value: current });
  }
  const stored = await deps.stores.datasetSuggestions.saveForTask(currentTaskId(), input.envId, input.datasetId, items, {
    providerId: conn.id,
    providerName: conn.name,
    model: answer.model,
    promptVersion: PROMPT_VERSION,
    language: input.language,
    usage: answer.usage,
  });
  Context.current().log.info(
    `${run.item} ('${detail.table_name}'): ${stored} suggestion(s) stored for review, ${answer.usage.total_tokens} tokens in ${answer.attempts} call(s)`,
  );
  return {
    ...run.base,
    status: 'suggested',
    outcome: 'succeeded',
    suggestions: stored,
    tokens: answer.usage,
    attempts: answer.attempts,
    duration_ms: Date.now() - run.started,
    next_actions: [
      {
        action: 'review_suggestions',
        description: 'Review the suggestions beside the current values, then accept, edit or reject them',
        request: { method: 'GET', path: `/api/datasets/${input.datasetId}/suggestions?env_id=${input.envId}`, body: null },
      },
    ],
  };
}
