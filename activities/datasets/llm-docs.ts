import { Context } from '@temporalio/activity';
import type { DocsLanguage, LlmDocsItem, Tokens } from '../../contracts/datasets.ts';
import type { ItemFailure } from '../../contracts/failures.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { NewSuggestion } from '../../db/datasets/suggestions.ts';
import { DEFAULT_PROVIDER_ID, type LlmConnection } from '../../db/llm-providers/store.ts';
import { egressPolicy } from '../../lib/egress/policy.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { completeStructured, LlmError, type LlmPolicy } from '../../lib/llm/chat.ts';
import { docsMessages, docsSchema, PROMPT_VERSION, sampleValues, type DatasetContext } from '../../lib/llm/dataset-docs.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { sameValue } from '../../lib/superset/dataset-edit.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';
import type { ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../item-failure.ts';
import { currentTaskId } from '../task-context.ts';

const NO_TOKENS: Tokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
const SAMPLE_ROWS = 20;

export interface DocumentDatasetInput {
  envId: string;
  datasetId: number;
  providerId: string;
  language: DocsLanguage;
}

/**
 * LLM documentation: per dataset, gather its context, ask the provider for descriptions as
 * structured JSON, and store them as suggestions for a person to review. Nothing is written to
 * Superset here. The provider's API key is read by provider id inside the activity (never part
 * of the workflow's input, result or history) and given only to the LLM client.
 */
export function createLlmDocsActivities(deps: ActivityDeps & { llmPolicy?: LlmPolicy }) {
  const { llmProviders: providers, datasetSuggestions: suggestions } = deps.stores;

  async function provider(providerId: string): Promise<LlmConnection> {
    try {
      return await providers.connection(providerId, deps.keyring, deps.config);
    } catch (err) {
      if (err instanceof NotFoundError) {
        failItem({
          step: 'provider',
          error: providerId === DEFAULT_PROVIDER_ID ? 'the default LLM provider is not configured (LLM_BASE_URL, LLM_MODEL)' : `LLM provider ${providerId} does not exist (any more)`,
          next_actions: [{ action: 'choose_provider', description: 'List the providers (GET /api/admin/llm-providers) and start the task with one that exists' }],
        });
      }
      throw err;
    }
  }

  return {
    /** Which provider, model and prompt a task uses, for its result (never the key). */
    async describeLlmProvider(input: { providerId: string }): Promise<{ id: string; name: string; model: string; promptVersion: string }> {
      const p = await provider(input.providerId);
      return { id: p.id, name: p.name, model: p.model, promptVersion: PROMPT_VERSION };
    },

    async documentDataset(input: DocumentDatasetInput): Promise<LlmDocsItem> {
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      try {
        return await documentOne(input);
      } finally {
        clearInterval(beat);
      }
    },
  };

  async function documentOne(input: DocumentDatasetInput): Promise<LlmDocsItem> {
    const ctx = Context.current();
    const { log } = ctx;
    const taskId = currentTaskId();
    const started = Date.now();
    const item = `dataset ${input.datasetId}`;
    const base: LlmDocsItem = {
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
    };
    const fail = (failure: ItemFailure, extra: Partial<LlmDocsItem> = {}): LlmDocsItem => {
      log.error(`${item}${base.title ? ` ('${base.title}')` : ''}: ${failure.error}`);
      return { ...base, ...extra, status: 'failed', outcome: 'failed', duration_ms: Date.now() - started, ...failure };
    };

    const already = await suggestions.countForTask(taskId, input.datasetId);
    if (already > 0) {
      log.info(`${item}: an earlier attempt of this task already stored ${already} suggestion(s)`);
      return { ...base, status: 'suggested', outcome: 'succeeded', suggestions: already, duration_ms: Date.now() - started };
    }

    const conn = await provider(input.providerId);
    const at = { step: 'read' };
    let detail: DatasetDetail;
    let context: DatasetContext;
    try {
      const client = await deps.superset(input.envId);
      detail = await client.datasets.get(input.datasetId);
      base.title = detail.table_name;
      at.step = 'context';
      const allowed = conn.sampleDataEnvIds.includes(input.envId);
      context = await contextOf(client, detail, allowed, log);
      base.sample_values_sent = context.columns.some((c) => (c.sample_values?.length ?? 0) > 0);
    } catch (err) {
      return fail(itemFailure(err, { step: at.step, item, envId: input.envId, listPath: `/api/datasets?env_id=${input.envId}` }));
    }

    let answer;
    try {
      answer = await completeStructured(
        { baseUrl: conn.baseUrl, apiKey: conn.apiKey, model: conn.model, timeoutSeconds: conn.timeoutSeconds, egress: egressPolicy(deps.config) },
        docsMessages(context, input.language),
        docsSchema(detail.columns.map((c) => c.column_name)),
        deps.llmPolicy,
        {
          heartbeat: () => ctx.heartbeat(),
          signal: ctx.cancellationSignal,
          onAttempt: (e) => {
            const line = `${item}: provider '${conn.name}' attempt ${e.attempt}: ${e.outcome} (${e.detail})`;
            if (e.outcome === 'answered') log.info(line);
            else log.warn(line);
          },
        },
      );
    } catch (err) {
      if (!(err instanceof LlmError)) throw err;
      return fail(
        {
          step: 'generate',
          error: `${conn.name} (${conn.model}): ${err.message}`,
          ...(err.status || err.providerMessage ? { upstream_error: { ...(err.status ? { status: err.status } : {}), message: err.providerMessage ?? err.message, type: err.kind } } : {}),
          next_actions: llmActions(err, conn),
        },
        { tokens: err.usage, attempts: err.attempts },
      );
    }

    const items: NewSuggestion[] = [];
    const currentDesc = detail.description ?? null;
    if (!sameValue(currentDesc, answer.value.dataset_description)) {
      items.push({ target: 'dataset', column_name: null, field: 'description', value: answer.value.dataset_description, base_value: currentDesc });
    }
    for (const c of answer.value.columns) {
      const col = detail.columns.find((x) => x.column_name === c.column_name);
      const current = (col?.description as string | null | undefined) ?? null;
      if (!sameValue(current, c.description)) items.push({ target: 'column', column_name: c.column_name, field: 'description', value: c.description, base_value: current });
    }
    const stored = await suggestions.saveForTask(taskId, input.envId, input.datasetId, items, {
      providerId: conn.id,
      providerName: conn.name,
      model: answer.model,
      promptVersion: PROMPT_VERSION,
      language: input.language,
      usage: answer.usage,
    });
    log.info(`${item} ('${detail.table_name}'): ${stored} suggestion(s) stored for review, ${answer.usage.total_tokens} tokens in ${answer.attempts} call(s)`);
    return {
      ...base,
      status: 'suggested',
      outcome: 'succeeded',
      suggestions: stored,
      tokens: answer.usage,
      attempts: answer.attempts,
      duration_ms: Date.now() - started,
      next_actions: [
        {
          action: 'review_suggestions',
          description: 'Review the suggestions beside the current values, then accept, edit or reject them',
          request: { method: 'GET', path: `/api/datasets/${input.datasetId}/suggestions?env_id=${input.envId}`, body: null },
        },
      ],
    };
  }

  /** What the model sees: names, types, SQL, metrics, existing texts, and sample values only where allowed. */
  async function contextOf(client: SupersetClient, d: DatasetDetail, samplesAllowed: boolean, log: Context['log']): Promise<DatasetContext> {
    let rows: Array<Record<string, unknown>> = [];
    if (samplesAllowed) {
      const physical = d.columns.filter((c) => !c.expression).map((c) => c.column_name);
      try {
        const data = await client.charts.data({
          datasource: { id: d.id, type: 'table' },
          queries: [{ columns: physical, row_limit: SAMPLE_ROWS }],
        });
        rows = data.result[0]?.data ?? [];
      } catch (err) {
        log.warn(`dataset ${d.id}: sample values could not be read (${err instanceof Error ? err.message : String(err)}); documenting without them`);
      }
    }
    return {
      name: d.table_name,
      kind: d.sql ? 'virtual' : 'physical',
      database_backend: d.database.backend ?? null,
      schema: d.schema ?? null,
      sql: d.sql ?? null,
      description: d.description ?? null,
      columns: d.columns.map((c) => ({
        name: c.column_name,
        type: c.type ?? null,
        is_temporal: !!c.is_dttm,
        expression: c.expression ?? null,
        label: c.verbose_name ?? null,
        description: c.description ?? null,
        ...(samplesAllowed && rows.length ? { sample_values: sampleValues(rows, c.column_name) } : {}),
      })),
      metrics: d.metrics.map((m) => ({ name: m.metric_name, expression: m.expression, label: m.verbose_name ?? null, description: m.description ?? null })),
    };
  }
}

function llmActions(err: LlmError, conn: LlmConnection): NextAction[] {
  const fixProvider: NextAction = {
    action: 'fix_provider',
    description: `Check provider '${conn.name}': its base URL, model and API key (PUT /api/admin/llm-providers/${conn.id}; test it with POST /api/admin/llm-providers/${conn.id}/test)`,
  };
  switch (err.kind) {
    case 'rate_limited':
      return [{ action: 'retry_later', description: 'The provider is rate limiting; run the failed datasets again later (the task result carries the request)' }];
    case 'unavailable':
    case 'timeout':
      return [{ action: 'retry_later', description: 'The provider failed or did not answer in time; run the failed datasets again, or raise its timeout_seconds' }, fixProvider];
    case 'invalid_answer':
      return [{ action: 'choose_model', description: 'The model did not follow the answer schema; run again, or use a model with structured-output support' }];
    case 'refused':
      return [fixProvider];
  }
}
