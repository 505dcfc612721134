/** Generating dataset documentation: an llm_docs task, built by the route's own input builder. */
import type { ParseResult } from '../../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../../lib/assistant/operation-texts.ts';
import { DEFAULT_PROVIDER_ID } from '../../../db/llm-providers/store.ts';
import type { AppContext } from '../../context.ts';
import { dashboardsOfDatasets, llmDocsInput } from '../../datasets/input.ts';
import { generateDocsBody } from '../../datasets/schemas.ts';
import { impactPreviews } from '../../impact/preview.ts';
import { resolveDatasets, resolveEnvironment } from '../resolve.ts';
import { impactLine } from './impact.ts';
import { requestBody } from './support.ts';
import { defineOperation, startsTask, type OperationContext, type Plan } from './types.ts';

/** The `default` provider, else the first one configured. */
async function llmProvider(app: AppContext): Promise<{ id: string; name: string } | undefined> {
  const d = await app.stores.llmProviders.exists(DEFAULT_PROVIDER_ID, app.config);
  if (d) return { id: DEFAULT_PROVIDER_ID, name: d.name };
  const { rows } = await app.stores.llmProviders.list(1, 1);
  return rows[0] ? { id: rows[0].id, name: rows[0].name } : undefined;
}

async function generateDocs({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const sets = await resolveDatasets(lang, app.supersets, where.id, e.datasets!);
  const provider = await llmProvider(app);
  if (!provider) return { kind: 'answered', text: OPERATION_TEXTS.noLlmProvider[lang]() };
  const language = e.language ?? lang;
  const body = requestBody(lang, generateDocsBody, {
    env_id: where.id,
    dataset_ids: sets.map((s) => s.id),
    llm_provider: provider.id,
    language,
  });
  const { input, params } = llmDocsInput(body, await dashboardsOfDatasets(app.supersets, app.logger, where.id, body.dataset_ids));
  const names = sets.map((s) => `#${s.id} ${s.table_name}`).join(', ');
  // Shown before it is confirmed: what uses the datasets whose descriptions it would suggest (api/impact).
  const impact = await impactPreviews(app, where.id, body.dataset_ids);
  return {
    kind: 'act',
    action: { type: 'task', kind: 'llm_docs', input, params },
    summary: [OPERATION_TEXTS.generateDocs[lang](language, sets.length, names, where.name, provider.name), impactLine(lang, impact)].join(
      '\n',
    ),
    resolved: { ...e, environment: where, datasets: sets, impact },
  };
}

export const datasetsGenerateDocs = defineOperation('datasets.generate_docs', { access: startsTask('llm_docs'), plan: generateDocs });
