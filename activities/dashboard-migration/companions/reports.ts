/**
 * Alerts and reports on the dashboard or one of its charts (`/api/v1/report/`, only with the
 * ALERT_REPORTS flag on; an environment without it is reported as such). Matched by name and
 * type; copied with the dashboard, chart and (alerts) database remapped to the target's ids and
 * the owners mapped by person. Recipients are copied as they are. A report created in the
 * target starts paused unless the request says otherwise, so the source's schedule does not start
 * mailing from the target before someone checks; an update keeps the target's own active switch.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CompanionItem } from '../../../contracts/companions.ts';
import { SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import type { ReportSchedule, ReportWrite } from '../../../lib/superset/resources/reports.ts';
import { attempt, item, onObject, type CompanionContext, type CompanionKind, type KindResult } from './kind.ts';
import { mapAccount, sourceAccount } from './people.ts';
import { underRules } from './sql-rules.ts';
import type { DashboardView } from './views.ts';

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

export const reports: CompanionKind = {
  kind: 'reports',
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
    const items: CompanionItem[] = [];
    for (const row of mine) {
      const report = await ctx.source.reports.get(row.id);
      const chart = report.chart_id !== null ? src.charts.find((c) => c.id === report.chart_id) : undefined;
      const on = chart ? { on: onObject('chart', chart.name) } : {};
      const wanted = desired(ctx, report, src, tgt, (o) => mapAccount(sourceAccount(srcDir, o), tgtDir)?.id ?? null);
      if ('missing' in wanted) {
        items.push(item(report.name, 'missing', { ...on, note: wanted.missing, next_action: wanted.next }));
        continue;
      }
      // An alert's SQL runs on the mapped database: under the pair's schema and catalog rules.
      if (wanted.body.sql && typeof wanted.body.database === 'number')
        wanted.body.sql =
          (await underRules({ sql: wanted.body.sql }, ctx.target, wanted.body.database, ctx.envRules)).sql ?? wanted.body.sql;
      const existing = targetList.find((t) => t.name === report.name && t.type === report.type);
      const current = existing ? await ctx.target.reports.get(existing.id) : null;
      const fields = current ? differing(wanted.body, current, ctx.pauseReports) : [];
      const action = !current ? 'create' : fields.length ? 'update' : 'unchanged';
      const i = item(report.name, action, { ...on, target_id: existing?.id ?? null, ...(fields.length ? { fields } : {}) });
      if (action === 'create' && ctx.pauseReports && report.active) i.note = 'paused in the target: turn it on there once checked';
      items.push(i);
      if (!write || action === 'unchanged' || !tgt) continue;
      if (current) {
        const { active: _keep, owners: _owners, ...change } = wanted.body;
        await attempt([i], () =>
          ctx.target.reports.update(current.id, ctx.pauseReports ? change : { ...change, active: wanted.body.active }),
        );
      } else {
        await attempt([i], () => ctx.target.reports.create(wanted.body));
      }
    }
    return { items };
  },
};

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
