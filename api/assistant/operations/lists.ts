/** Listing and searching the dashboards and datasets of an environment: read-only, run at once. */
import type { ParseResult } from '../../../lib/assistant/intent.ts';
import { count, NOUNS } from '../../../lib/assistant/texts.ts';
import { checkRefs, resolveEnvironment } from '../resolve.ts';
import { listAnswer } from './support.ts';
import { defineOperation, needs, type OperationContext, type Plan } from './types.ts';

const LIST_SIZE = 25;

async function listDashboards({ app, principal, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  if (e.query) checkRefs(lang, [e.query]);
  const where = resolveEnvironment(lang, e.environment!, envs);
  const page = await app.dashboards.list({
    envId: where.id,
    page: 1,
    pageSize: LIST_SIZE,
    search: e.query,
    overrideShowAll: false,
    pageContext: e.query ? 'other' : 'dashboards_main',
    principal,
  });
  const items = page.items.map((d) => ({ id: d.id, title: d.title, slug: d.slug, url: d.url }));
  const lines = items.map((d) => `#${d.id} ${d.title}${d.slug ? ` (${d.slug})` : ''}`);
  return listAnswer(lang, e, where, { total: page.total, counted: count[lang](page.total, NOUNS.dashboard), items, lines });
}

async function listDatasets({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  if (e.query) checkRefs(lang, [e.query]);
  const where = resolveEnvironment(lang, e.environment!, envs);
  const res = await app.supersets.use(where.id, (client) =>
    client.listDatasets({ filters: e.query ? [{ col: 'table_name', opr: 'ct', value: e.query }] : [], page: 0, pageSize: LIST_SIZE }),
  );
  const items = res.result.map((d) => ({
    id: d.id,
    table_name: d.table_name,
    schema: d.schema ?? null,
    database: d.database?.database_name ?? null,
  }));
  const lines = items.map((d) => `#${d.id} ${d.table_name}`);
  return listAnswer(lang, e, where, { total: res.count, counted: count[lang](res.count, NOUNS.dataset), items, lines });
}

export const dashboardsList = defineOperation('dashboards.list', { access: needs('dashboards:READ'), plan: listDashboards });
export const dashboardsSearch = defineOperation('dashboards.search', { access: needs('dashboards:READ'), plan: listDashboards });
export const datasetsList = defineOperation('datasets.list', { access: needs('datasets:READ'), plan: listDatasets });
export const datasetsSearch = defineOperation('datasets.search', { access: needs('datasets:READ'), plan: listDatasets });
