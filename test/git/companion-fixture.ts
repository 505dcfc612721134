/**
 * A dashboard in Superset a with the companions people build around it, for the tests that take
 * it through a repository (test/git/companions.test.ts: sync and deploy; test/clean-release/
 * release-companions.test.ts: a release's publish): a chart drawing an annotation layer, two
 * owners (admin and Ann), a dashboard role, a CSS template its CSS holds, a custom tag, a weekly
 * report and, when asked, a theme. In d: the role and Ann's account (copying never creates either),
 * and a warehouse database to map a's onto. Names carry the file's prefix: the instances are shared.
 */
import path from 'node:path';
import { prefixedTables } from '../dashboard-migration/support.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  createUser,
  userIdOf,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

/** A Superset answer's `result` (a GET). */
export const get = async <T = any>(s: SupersetClient, p: string, q?: unknown): Promise<T> =>
  (await s.request<{ result: T }>('GET', p, q ? { q } : {})).result;
/** A list's rows whose `col` equals `value` (other test files share the instances). */
export const named = <T = any>(s: SupersetClient, p: string, col: string, value: string) =>
  get<T[]>(s, p, { page_size: 100, filters: [{ col, opr: 'eq', value }] });
/** One companion kind's report in a migrated or deployed item. */
export const kind = (item: any, name: string) => item.companions.find((k: any) => k.kind === name);

export function companionNames(P: string) {
  return {
    viewers: `${P}_viewers`,
    layerName: `${P} launches`,
    templateName: `${P} brand`,
    themeName: `${P} theme`,
    weekly: `${P} weekly`,
    tagName: `${P}-finance`,
  };
}

export interface CompanionSource {
  dash: number;
  dashUuid: string;
  rowsUuid: string;
  reportId: number;
  /** With `theme`: the theme's uuid in a. */
  themeUuid?: string;
  sourceDb: number;
  targetDb: number;
}

/**
 * `decoyLayers`: d's layer of that name gets another id than a's (the chart's params name a's), so
 * a test sees the chart pointed at d's layer rather than at a's id by chance.
 */
export async function buildCompanionSource(
  a: SupersetClient,
  d: SupersetClient,
  P: string,
  dir: string,
  opts: { css: string; theme?: boolean; decoyLayers?: boolean },
): Promise<CompanionSource> {
  const n = companionNames(P);
  const db = await createSqliteDatabase(a, { name: `${P}_src`, path: path.join(dir, `${P}-src.db`), tables: prefixedTables(P) });
  const ds = await createDataset(a, { database: db.id, tableName: `${P}_sales` });
  const rows = await createTableChart(a, { name: `${P} rows`, datasetId: ds.id, columns: ['ds', 'region', 'units'] });
  const rowsUuid = (await get(a, `/api/v1/chart/${rows.id}`)).uuid;
  const layer = (await a.request<{ id: number }>('POST', '/api/v1/annotation_layer/', { json: { name: n.layerName, descr: 'launches' } }))
    .id;
  await a.request('POST', `/api/v1/annotation_layer/${layer}/annotation/`, {
    json: { short_descr: 'v1 launch', start_dttm: '2024-01-02T00:00:00', end_dttm: '2024-01-02T01:00:00', long_descr: 'v1 day' },
  });
  const params = JSON.parse((await get(a, `/api/v1/chart/${rows.id}`)).params);
  params.annotation_layers = [
    { name: 'launches', sourceType: 'NATIVE', annotationType: 'EVENT', value: layer, show: true, showLabel: true, overrides: {} },
  ];
  await a.request('PUT', `/api/v1/chart/${rows.id}`, { json: { params: JSON.stringify(params) } });
  const ann = await createUser(a, { username: `${P}ann`, password: 'ann-pw', firstName: 'Ann', lastName: 'Analyst', roles: ['Gamma'] });
  const role = (await a.request<{ id: number }>('POST', '/api/v1/security/roles/', { json: { name: n.viewers } })).id;
  await a.request('POST', '/api/v1/css_template/', { json: { template_name: n.templateName, css: opts.css } });
  const theme = opts.theme
    ? (
        await a.request<{ id: number }>('POST', '/api/v1/theme/', {
          json: { theme_name: n.themeName, json_data: JSON.stringify({ token: { colorPrimary: '#123456', borderRadius: 4 } }) },
        })
      ).id
    : undefined;
  const main = await createDashboard(a, { title: `${P} sales`, slug: `${P}-sales`, charts: [rows] });
  await a.request('PUT', `/api/v1/dashboard/${main.id}`, {
    json: { owners: [await userIdOf(a, 'admin'), ann.id], roles: [role], css: opts.css, ...(theme ? { theme_id: theme } : {}) },
  });
  await a.request('POST', '/api/v1/tag/', {
    json: { name: n.tagName, description: 'money matters', objects_to_tag: [['dashboard', main.id]] },
  });
  const reportId = (
    await a.request<{ id: number }>('POST', '/api/v1/report/', {
      json: {
        type: 'Report',
        name: n.weekly,
        crontab: '0 9 * * 1',
        dashboard: main.id,
        active: true,
        timezone: 'UTC',
        owners: [ann.id],
        creation_method: 'alerts_reports',
        report_format: 'PNG',
        recipients: [{ type: 'Email', recipient_config_json: { target: 'team@example.com' } }],
      },
    })
  ).id;

  if (opts.decoyLayers)
    for (let i = 0, decoy = 0; decoy < layer && i < 100; i++)
      decoy = (await d.request<{ id: number }>('POST', '/api/v1/annotation_layer/', { json: { name: `${P} decoy ${i}` } })).id;
  await d.request('POST', '/api/v1/security/roles/', { json: { name: n.viewers } });
  // The same person as in a under another e-mail (mapped by username first), unique per run: every test file shares d.
  await createUser(d, {
    username: `${P}ann`,
    password: 'ann-pw',
    firstName: 'Ann',
    lastName: 'Analyst',
    email: `ann.${P}.d@example.org`,
    roles: ['Gamma'],
  });
  const target = await createSqliteDatabase(d, { name: `${P}_warehouse`, path: path.join(dir, `${P}-d.db`), tables: prefixedTables(P) });
  return {
    dash: main.id,
    dashUuid: main.uuid!,
    rowsUuid,
    reportId,
    ...(theme ? { themeUuid: (await get(a, `/api/v1/theme/${theme}`)).uuid } : {}),
    sourceDb: db.id,
    targetDb: target.id,
  };
}
