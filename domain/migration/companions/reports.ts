/**
 * Alerts and reports on the dashboard or one of its charts (`/api/v1/report/`, only with the
 * ALERT_REPORTS flag on; an environment without it is reported as such). Matched by name and
 * type; copied with the dashboard, chart and (alerts) database remapped to the target's ids and
 * the owners mapped by person. Recipients are copied as they are, so what reaches a target that
 * mails is decided here: a report created in the target starts paused unless the request says
 * otherwise (`pause_reports: false`), and an update that changes what an active target report
 * sends or to whom (SENDS) pauses it too, named with the next action; any other update keeps the
 * target's own active switch. An alert's SQL, which Superset's worker runs on the target
 * database on schedule, must pass the read-only decider (lib/sql) for that database's dialect.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CompanionItem } from '../../../contracts/companions.ts';
import { SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import { checkReadOnlyQuery } from '../../../lib/sql/read-only.ts';
import type { ReportSchedule, ReportWrite } from '../../../lib/superset/resources/reports.ts';
import { attempt, item, onObject, type CompanionContext, type CompanionKind, type KindResult } from './kind.ts';
import { labelOf, mapAccount, sourceAccount } from './people.ts';
import { underRules } from './sql-rules.ts';
import type { DashboardView } from './views.ts';
import { answersOf, person, type CapturedReads, type CompanionDocuments, type Person } from './kind-documents.ts';

/** Fields compared (and written); `active` only when copied reports are not paused. */
const COMPARED = [
  'description',
  'crontab',
  'timezone',
  'dashboard',
  'chart',
  'database',
  'sql',
  'validator_type',
  'validator_config_json',
  'grace_period',
  'log_retention',
  'working_timeout',
  'report_format',
  'recipients',
  'extra',
  'email_subject',
  'force_screenshot',
  'custom_width',
] as const;

/** What a report sends and to whom: a change of one of these pauses an active target report (unless `pause_reports: false`). */
const SENDS: ReadonlySet<string> = new Set(['recipients', 'report_format', 'sql', 'database', 'chart', 'dashboard']);

/** `companions/reports/<name>.yaml`: an alert or report, its dashboard, chart and database by uuid, its owners by person. */
export type ReportDoc = Omit<ReportSchedule, 'id' | 'dashboard_id' | 'chart_id' | 'database_id' | 'owners'> & {
  dashboard: boolean;
  chart: string | null;
  database: string | null;
  owners: Person[];
};

const reportsDocuments: CompanionDocuments<ReportDoc> = {
  write: (from) => reportDocs(from).map((d) => [d.name, d] as const),
  replay(docs, x) {
    const full: ReportSchedule[] = docs.map(({ dashboard, chart, database, owners, ...rest }, i) => ({
      ...rest,
      id: i + 1,
      dashboard_id: dashboard ? x.dashboard.id : null,
      chart_id: chart ? (x.charts.find((c) => c.uuid === chart)?.id ?? null) : null,
      database_id: x.dbId(database),
      owners: owners.map((p) => x.ownerOf(p)),
    }));
    x.set(
      'reports',
      'list',
      [],
      full.map((r) => ({ id: r.id, name: r.name, type: r.type, dashboard_id: r.dashboard_id, chart_id: r.chart_id })),
    );
    for (const r of full) x.set('reports', 'get', [r.id], r);
  },
};

/** Every report the kind read in full (the ones on the dashboard or its charts). */
function reportDocs({ recording, dashboard, charts, databases, who }: CapturedReads): ReportDoc[] {
  return answersOf(recording, 'reports', 'get').map(({ answer }) => {
    const { id: _id, dashboard_id, chart_id, database_id, owners: people, recipients, ...rest } = answer as ReportSchedule;
    return {
      ...rest,
      dashboard: dashboard_id !== null && dashboard_id === dashboard.id,
      chart: chart_id !== null ? (charts.find((c) => c.id === chart_id)?.uuid ?? null) : null,
      database: database_id !== null ? (databases.get(database_id) ?? null) : null,
      owners: people.map((o) => person(who(o))).sort((a, b) => labelOf(a).localeCompare(labelOf(b))),
      recipients: [...recipients].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    };
  });
}

export const reports: CompanionKind<'reports'> = {
  kind: 'reports',
  documents: reportsDocuments,
  reads: ['reports', 'databases'],
  lists: ['reports.list'],
  async run(ctx, write): Promise<KindResult> {
    const src = await ctx.sourceView();
    const chartIds = new Set(src.charts.map((c) => c.id));
    const listed = await listOr404(() => ctx.source.reports.list());
    if (listed === null)
      return { items: [], unavailable: 'the source does not offer alerts and reports (Superset feature flag ALERT_REPORTS is off there)' };
    const mine = listed.filter((r) => r.dashboard_id === src.dashboard.id || (r.chart_id !== null && chartIds.has(r.chart_id)));
    if (!mine.length) return { items: [] };
    const targetList = await listOr404(() => ctx.target.reports.list());
    if (targetList === null)
      return { items: [], unavailable: 'the target does not offer alerts and reports (Superset feature flag ALERT_REPORTS is off there)' };
    const [tgt, srcDir, tgtDir] = await Promise.all([ctx.targetView(), ctx.sourcePeople(), ctx.targetPeople()]);
    const owner = (o: ReportSchedule['owners'][number]) => mapAccount(sourceAccount(srcDir, o), tgtDir)?.id ?? null;
    const items: CompanionItem[] = [];
    for (const row of mine) items.push(await oneReport(ctx, write, await ctx.source.reports.get(row.id), { src, tgt, targetList, owner }));
    return { items };
  },
};

interface Sides {
  src: DashboardView;
  tgt: DashboardView | null;
  targetList: Array<{ id: number; name: string; type: string }>;
  owner: (o: ReportSchedule['owners'][number]) => number | null;
}

/** One report compared with its same-named target report and, with `write`, written. */
async function oneReport(ctx: CompanionContext, write: boolean, report: ReportSchedule, sides: Sides): Promise<CompanionItem> {
  const chart = report.chart_id !== null ? sides.src.charts.find((c) => c.id === report.chart_id) : undefined;
  const on = chart ? { on: onObject('chart', chart.name) } : {};
  const wanted = desired(ctx, report, sides.src, sides.tgt, sides.owner);
  if ('missing' in wanted) return item(report.name, 'missing', { ...on, note: wanted.missing, next_action: wanted.next });
  // An alert's SQL runs on the mapped database: under the pair's schema and catalog rules.
  if (wanted.body.sql && typeof wanted.body.database === 'number')
    wanted.body.sql = (await underRules({ sql: wanted.body.sql }, ctx.target, wanted.body.database, ctx.envRules)).sql ?? wanted.body.sql;
  const existing = sides.targetList.find((t) => t.name === report.name && t.type === report.type);
  const current = existing ? await ctx.target.reports.get(existing.id) : null;
  const fields = current ? differing(wanted.body, current, ctx.pauseReports) : [];
  const pause = !!current && ctx.pauseReports && current.active && fields.some((f) => SENDS.has(f));
  if (pause) fields.push('active');
  const action = !current ? 'create' : fields.length ? 'update' : 'unchanged';
  const i = item(report.name, action, { ...on, target_id: existing?.id ?? null, ...(fields.length ? { fields } : {}) });
  if (action === 'create' && ctx.pauseReports && report.active) i.note = 'paused in the target: turn it on there once checked';
  if (pause) pausedBySends(i, fields);
  else if (fields.includes('recipients')) i.note = 'recipients changed';
  if (action === 'unchanged') return i;
  const refused = await refusedSql(ctx, wanted.body);
  if (refused) return Object.assign(i, refused);
  if (!write || !sides.tgt) return i;
  if (current) {
    const { active: _keep, owners: _owners, ...change } = wanted.body;
    const active = pause ? { active: false } : ctx.pauseReports ? {} : { active: wanted.body.active };
    await attempt([i], () => ctx.target.reports.update(current.id, { ...change, ...active }));
  } else {
    await attempt([i], () => ctx.target.reports.create(wanted.body));
  }
  return i;
}

/** An active target report whose recipients or content change is written paused: named, with what to check. */
function pausedBySends(i: CompanionItem, fields: string[]): void {
  const changed = fields.filter((f) => SENDS.has(f));
  i.note = `paused in the target: its ${changed.join(', ')} change${changed.includes('recipients') ? ' (recipients changed)' : ''}; it was active there`;
  i.next_action = {
    action: 'turn_on_report',
    description: `Check the recipients and content of '${i.name}' in the target Superset (Alerts & Reports) and turn it on there; or migrate again with companions.pause_reports false to keep the source's active switch`,
  };
}

/** An alert's SQL the read-only decider refuses for the target database's dialect: the item fails with its reason, nothing written. */
async function refusedSql(ctx: CompanionContext, body: ReportWrite): Promise<Partial<CompanionItem> | null> {
  if (!body.sql?.trim() || typeof body.database !== 'number') return null;
  const backend = (await ctx.target.databases.find(body.database))?.backend ?? null;
  const verdict = await checkReadOnlyQuery(body.sql, backend);
  if (verdict.ok) return null;
  return {
    error: `the alert's SQL ${verdict.reason}; Superset would run it on target database ${body.database} on its schedule, so it was not written`,
    next_action: {
      action: 'fix_alert_sql',
      description: `Make the SQL of alert '${body.name}' in the source a single read-only query (or change the pair's schema and catalog rules), then migrate again`,
    },
  };
}

async function listOr404<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof SupersetNotFoundError) return null;
    throw err;
  }
}

/** The report as the target should hold it: ids remapped, owners mapped by person, paused on request. */
function desired(
  ctx: CompanionContext,
  r: ReportSchedule,
  src: DashboardView,
  tgt: DashboardView | null,
  owner: (o: ReportSchedule['owners'][number]) => number | null,
): { body: ReportWrite } | { missing: string; next: CompanionItem['next_action'] } {
  const chartUuid = r.chart_id !== null ? (src.charts.find((c) => c.id === r.chart_id)?.uuid ?? null) : null;
  const chart = chartUuid ? (tgt?.charts.find((c) => c.uuid === chartUuid)?.id ?? null) : null;
  let database: number | null | undefined;
  if (r.database_id !== null) {
    database = ctx.mappings.get(r.database_id) ?? null;
    if (database === null) {
      return {
        missing: `the alert queries source database ${r.database_id}, which has no mapping to a target database`,
        next: {
          action: 'map_database',
          description: `Map source database ${r.database_id} to a target database (PUT /api/environments/{source}/db-mappings/{target}), then migrate again`,
        },
      };
    }
  }
  const body: Record<string, unknown> = {
    type: r.type,
    name: r.name,
    crontab: r.crontab,
    active: ctx.pauseReports ? false : r.active,
    dashboard: r.dashboard_id !== null ? (tgt?.dashboard.id ?? null) : null,
    chart,
    recipients: r.recipients,
    owners: r.owners.map(owner).filter((id): id is number => id !== null),
  };
  if (database !== undefined) body.database = database;
  for (const k of [
    'description',
    'timezone',
    'creation_method',
    'sql',
    'validator_type',
    'validator_config_json',
    'grace_period',
    'log_retention',
    'working_timeout',
    'report_format',
    'force_screenshot',
    'custom_width',
    'extra',
    'email_subject',
  ] as const) {
    if (r[k] !== null && r[k] !== undefined) body[k] = r[k];
  }
  return { body: body as ReportWrite };
}

/** The compared fields that differ between what the target should hold and what it holds. */
function differing(wanted: ReportWrite, current: ReportSchedule, paused: boolean): string[] {
  const now: Record<string, unknown> = {
    ...current,
    dashboard: current.dashboard_id,
    chart: current.chart_id,
    database: current.database_id,
  };
  const want = wanted as unknown as Record<string, unknown>;
  const keys: string[] = [...COMPARED, ...(paused ? [] : ['active'])];
  return keys.filter((k) => {
    if (k === 'database' && want.database === undefined) return false;
    if (k === 'recipients') return !isDeepStrictEqual(norm(want.recipients), norm(now.recipients));
    return !isDeepStrictEqual(want[k] ?? null, now[k] ?? null);
  });
}

function norm(v: unknown): string[] {
  return (Array.isArray(v) ? v : []).map((x) => JSON.stringify([x.type, x.recipient_config_json])).sort();
}
