/**
 * The companion fixture of the version matrix, built the same way on every release: a dashboard
 * on a virtual dataset that reads dev's schema of a PostgreSQL warehouse, with a weekly report, an
 * alert on one of its charts, two owners, a role, two tags, an annotation layer one chart draws,
 * a CSS template, a saved query behind the dataset, certification, a custom theme (6.0 and later;
 * the releases before have none) and an embedded configuration. What a target needs beside it
 * (prod's schema, the role and the person) is built by `prepareTarget`.
 */
import pg from 'pg';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import {
  createBigNumberChart,
  createDashboard,
  createDatabase,
  createDataset,
  createTableChart,
  createUser,
  sqlMetric,
  userIdOf,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

export const DEV_SCHEMA = 'analytics_dev';
export const PROD_SCHEMA = 'analytics';
export const DEV_APP = 'https://app-dev.example.com';
export const PROD_APP = 'https://app.example.com';
export const PARTNER = 'https://partner.example.org';

/** Everything one source release holds for the matrix, by name (the names carry the release's prefix). */
export interface CompanionSource {
  prefix: string;
  release: string;
  dev: { id: number };
  dataset: { id: number; name: string; sql: string };
  dashboard: { id: number; uuid: string; title: string };
  /** A second dashboard owned by a person and shown to a role no target has (built on the newest release only). */
  ghost?: { id: number };
  names: ReturnType<typeof namesOf>;
  theme?: { id: number; uuid: string };
  embeddedUuid: string;
}

export function namesOf(p: string) {
  return {
    viewers: `${p}_viewers`,
    onlyHere: `${p}_only_here`,
    ann: `${p}ann`,
    ghost: `${p}ghost`,
    layer: `${p} launches`,
    template: `${p} brand css`,
    css: `.${p}-header { color: #123456; }`,
    weekly: `${p} weekly`,
    alert: `${p} units alert`,
    tags: [`${p}-finance`, `${p}-weekly`],
    theme: `${p} brand`,
    rows: `${p} rows`,
    total: `${p} total`,
  };
}

export const themeConfig = (color: string) => JSON.stringify({ token: { colorPrimary: color, borderRadius: 4 } });
/** Themes came with Superset 6.0. */
export const hasThemes = (release: string) => Number(release.split('.')[0]) >= 6;

/** One PostgreSQL database of the run holding `<schema>.orders`; its SQLAlchemy URI. */
export async function warehouse(adminUrl: string, dbName: string, schema: string): Promise<string> {
  const root = new pg.Client({ connectionString: adminUrl });
  await root.connect();
  await root.query(`create database ${dbName}`);
  await root.end();
  const url = withDatabase(adminUrl, dbName);
  const data = new pg.Client({ connectionString: url });
  await data.connect();
  await data.query(
    `create schema ${schema}; create table ${schema}.orders (ds date, region text, units integer);
     insert into ${schema}.orders select date '2025-01-01' + i, (array['EMEA','NA','APAC'])[1 + i % 3], 1 + i % 7 from generate_series(0, 29) i`,
  );
  await data.end();
  return url.replace(/^postgres(ql)?:/, 'postgresql:');
}

export async function dropDatabases(adminUrl: string, names: string[]): Promise<void> {
  if (!names.length) return;
  const root = new pg.Client({ connectionString: adminUrl });
  await root.connect();
  for (const db of names) await root.query(`drop database if exists ${db} with (force)`).catch(() => undefined);
  await root.end();
}

const createRole = async (s: SupersetClient, name: string) =>
  (await s.request<{ id: number }>('POST', '/api/v1/security/roles/', { json: { name } })).id;

/** The annotation layer with two launches, drawn by `chartId` (by id inside its params, as Superset's UI saves it). */
async function drawLayer(s: SupersetClient, name: string, chartId: number): Promise<void> {
  const layer = (await s.request<{ id: number }>('POST', '/api/v1/annotation_layer/', { json: { name, descr: 'product launches' } })).id;
  for (const [short, day] of [
    ['v1 launch', '2025-01-02'],
    ['v2 launch', '2025-01-20'],
  ])
    await s.request('POST', `/api/v1/annotation_layer/${layer}/annotation/`, {
      json: { short_descr: short, start_dttm: `${day}T00:00:00`, end_dttm: `${day}T01:00:00`, long_descr: `${short} day` },
    });
  const params = JSON.parse((await s.request<{ result: { params: string } }>('GET', `/api/v1/chart/${chartId}`)).result.params);
  params.annotation_layers = [
    { name: 'launches', sourceType: 'NATIVE', annotationType: 'EVENT', value: layer, show: true, showLabel: true, overrides: {} },
  ];
  await s.request('PUT', `/api/v1/chart/${chartId}`, { json: { params: JSON.stringify(params) } });
}

/** A weekly report on the dashboard and an alert on the total chart, owned by admin and Ann. */
async function schedule(
  s: SupersetClient,
  n: ReturnType<typeof namesOf>,
  ids: { dashboard: number; chart: number; db: number; owners: number[] },
) {
  const recipients = (target: string) => [{ type: 'Email', recipient_config_json: { target } }];
  const common = {
    active: true,
    timezone: 'UTC',
    owners: ids.owners,
    creation_method: 'alerts_reports',
    report_format: 'PNG',
    log_retention: 90,
    working_timeout: 3600,
  };
  await s.request('POST', '/api/v1/report/', {
    json: {
      ...common,
      type: 'Report',
      name: n.weekly,
      crontab: '0 9 * * 1',
      dashboard: ids.dashboard,
      recipients: recipients('team@example.com'),
    },
  });
  await s.request('POST', '/api/v1/report/', {
    json: {
      ...common,
      type: 'Alert',
      name: n.alert,
      crontab: '*/30 * * * *',
      chart: ids.chart,
      database: ids.db,
      sql: `SELECT SUM(units) FROM ${DEV_SCHEMA}.orders`,
      validator_type: 'operator',
      validator_config_json: { op: '>', threshold: 500 },
      grace_period: 3600,
      recipients: recipients('ops@example.com'),
    },
  });
}

/** Tags, theme (6.0 and later) and embedded configuration of the dashboard. */
async function decorate(s: SupersetClient, release: string, n: ReturnType<typeof namesOf>, dashboardId: number, rowsId: number) {
  await s.request('POST', '/api/v1/tag/', {
    json: { name: n.tags[0], description: 'money matters', objects_to_tag: [['dashboard', dashboardId]] },
  });
  await s.request('POST', '/api/v1/tag/', {
    json: {
      name: n.tags[1],
      description: 'looked at weekly',
      objects_to_tag: [
        ['dashboard', dashboardId],
        ['chart', rowsId],
      ],
    },
  });
  let theme: CompanionSource['theme'];
  if (hasThemes(release)) {
    const id = (
      await s.request<{ id: number }>('POST', '/api/v1/theme/', { json: { theme_name: n.theme, json_data: themeConfig('#112233') } })
    ).id;
    theme = { id, uuid: (await s.request<{ result: { uuid: string } }>('GET', `/api/v1/theme/${id}`)).result.uuid };
    await s.request('PUT', `/api/v1/dashboard/${dashboardId}`, { json: { theme_id: id } });
  }
  const embedded = await s.request<{ result: { uuid: string } }>('PUT', `/api/v1/dashboard/${dashboardId}/embedded`, {
    json: { allowed_domains: [DEV_APP, PARTNER] },
  });
  return { theme, embeddedUuid: embedded.result.uuid };
}

/** The whole fixture on one release; `ghost` adds the dashboard whose owner and role no target has. */
export async function buildCompanionSource(
  s: SupersetClient,
  release: string,
  p: string,
  devUri: string,
  ghost: boolean,
): Promise<CompanionSource> {
  const n = namesOf(p);
  const dev = await createDatabase(s, { name: `${p}_dev`, sqlalchemyUri: devUri });
  const sql = `select ds, region, units from ${DEV_SCHEMA}.orders`;
  const ds = await createDataset(s, { database: dev.id, schema: DEV_SCHEMA, tableName: `${p}_orders_v`, sql });
  const rows = await createTableChart(s, { name: n.rows, datasetId: ds.id, columns: ['ds', 'region', 'units'] });
  const total = await createBigNumberChart(s, { name: n.total, datasetId: ds.id, metric: sqlMetric('SUM(units)', 'total') });
  await drawLayer(s, n.layer, rows.id);
  const ann = await createUser(s, { username: n.ann, password: 'ann-pw', firstName: 'Ann', lastName: 'Analyst', roles: ['Gamma'] });
  const adminId = await userIdOf(s, 'admin');
  const viewers = await createRole(s, n.viewers);
  await s.request('POST', '/api/v1/css_template/', { json: { template_name: n.template, css: n.css } });
  const main = await createDashboard(s, { title: `${p} sales`, slug: `${p}-sales`, charts: [rows, total] });
  await s.request('PUT', `/api/v1/dashboard/${main.id}`, {
    json: { owners: [adminId, ann.id], roles: [viewers], css: n.css, certified_by: 'Data team', certification_details: 'checked weekly' },
  });
  await schedule(s, n, { dashboard: main.id, chart: total.id, db: dev.id, owners: [adminId, ann.id] });
  await s.request('POST', '/api/v1/saved_query/', {
    json: { db_id: dev.id, label: `${p}_orders_v`, sql, schema: DEV_SCHEMA, description: 'behind the orders dataset' },
  });
  const { theme, embeddedUuid } = await decorate(s, release, n, main.id, rows.id);
  const out: CompanionSource = {
    prefix: p,
    release,
    dev,
    dataset: { id: ds.id, name: `${p}_orders_v`, sql },
    dashboard: { id: main.id, uuid: main.uuid!, title: `${p} sales` },
    names: n,
    theme,
    embeddedUuid,
  };
  if (ghost) {
    const g = await createUser(s, { username: n.ghost, password: 'ghost-pw', firstName: 'Gus', lastName: 'Ghost', roles: ['Gamma'] });
    const onlyHere = await createRole(s, n.onlyHere);
    const chart = await createTableChart(s, { name: `${p} ghost rows`, datasetId: ds.id, columns: ['ds', 'units'] });
    const d = await createDashboard(s, { title: `${p} ghost`, slug: `${p}-ghost`, charts: [chart] });
    await s.request('PUT', `/api/v1/dashboard/${d.id}`, { json: { owners: [adminId, g.id], roles: [onlyHere] } });
    out.ghost = { id: d.id };
  }
  return out;
}

/** What a target needs for a source's dashboard: the source's role and Ann's account (under another e-mail). */
export async function prepareTarget(t: SupersetClient, src: CompanionSource, label: string): Promise<void> {
  await createRole(t, src.names.viewers);
  await createUser(t, {
    username: src.names.ann,
    password: 'ann-pw',
    firstName: 'Ann',
    lastName: 'Analyst',
    email: `ann.${src.prefix}.${label}@example.org`,
    roles: ['Gamma'],
  });
}
