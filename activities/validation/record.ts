/**
 * A checked dashboard made into its validation item: its status from its charts' verdicts (and
 * the browser check's), what the verdict store remembers of each (first seen broken, last
 * passed), the error in words and the next actions; then recorded in `task_items` with the
 * task's progress and the metrics.
 */
import { Context } from '@temporalio/activity';
import type { BrowserCheck } from '../../contracts/browser-check.ts';
import type { ItemFailure } from '../../contracts/failures.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import { progressLogLine } from '../../contracts/tasks.ts';
import {
  dashboardStatus,
  validateAgainAction,
  VALIDATION_OUTCOME,
  type ChartVerdict,
  type ValidationBrief,
  type ValidationItem,
  type ValidationStatus,
  type VerdictHistory,
} from '../../contracts/validation.ts';
import { DASHBOARD_ROW } from '../../db/validation/verdicts.ts';
import { metrics } from '../../lib/telemetry/metrics.ts';
import type { ActivityDeps } from '../deps.ts';
import { verdictTotals, type CheckedDashboard } from './check.ts';

export interface DashboardRef {
  envId: string;
  dashboardId: number;
  position: number;
  total: number;
}

const NO_HISTORY: VerdictHistory = { first_seen_broken_at: null, last_passed_at: null, newly_broken: false };

/** The dashboard row's verdict: only a dashboard every chart of which passed is proven passing. */
const dashboardVerdict = (s: ValidationStatus): ChartVerdict => (s === 'broken' ? 'broken' : s === 'passed' ? 'passed' : 'not_verifiable');

/** The item of a checked dashboard before the verdict store is consulted (recorded while the browser check runs). */
export function checkedItem(ref: DashboardRef, checked: CheckedDashboard, browser?: BrowserCheck): ValidationItem {
  const totals = verdictTotals(checked.charts);
  const status = dashboardStatus(totals, browser);
  return {
    kind: 'dashboard',
    id: ref.dashboardId,
    title: checked.title,
    status,
    outcome: VALIDATION_OUTCOME[status],
    checked_at: checked.charts[0]?.checked_at ?? new Date().toISOString(),
    charts: checked.charts.map((c) => ({ ...c, ...NO_HISTORY })),
    totals,
    ...(browser ? { browser } : {}),
    ...NO_HISTORY,
    next_actions: [],
  };
}

/** The item of a dashboard whose check could not run: Superset's message, never a verdict on its charts. */
export function failedItem(ref: DashboardRef, failure: ItemFailure, title: string | null = null): ValidationItem {
  return {
    kind: 'dashboard',
    id: ref.dashboardId,
    title,
    status: 'failed',
    outcome: 'failed',
    checked_at: new Date().toISOString(),
    charts: [],
    totals: { passed: 0, broken: 0, not_verifiable: 0 },
    ...NO_HISTORY,
    ...failure,
    next_actions: [
      ...failure.next_actions,
      validateAgainAction(ref.envId, [ref.dashboardId], 'Validate this dashboard again once Superset answers'),
    ],
  };
}

/** Applies the item's verdicts to the store, fills in their history, the error and next actions. */
export async function withHistory(
  deps: Pick<ActivityDeps, 'stores'>,
  taskId: string,
  ref: DashboardRef,
  item: ValidationItem,
  browserAsked: boolean,
): Promise<ValidationItem> {
  if (item.status === 'failed') return item;
  const verdicts = [
    ...item.charts.map((c) => ({ chartId: c.id, verdict: c.verdict })),
    { chartId: DASHBOARD_ROW, verdict: dashboardVerdict(item.status) },
  ];
  const history = await deps.stores.validationVerdicts.apply(ref.envId, ref.dashboardId, taskId, new Date(item.checked_at), verdicts);
  const charts = item.charts.map((c) => ({ ...c, ...(history.get(c.id) ?? NO_HISTORY) }));
  const { awaiting_browser: _, ...rest } = item;
  const done: ValidationItem = { ...rest, charts, ...(history.get(DASHBOARD_ROW) ?? NO_HISTORY) };
  return { ...done, ...explained(ref, done, browserAsked) };
}

function explained(
  ref: DashboardRef,
  item: ValidationItem,
  browserAsked: boolean,
): Pick<ValidationItem, 'error' | 'step' | 'next_actions'> {
  const name = item.title ? `'${item.title}'` : `dashboard ${item.id}`;
  const actions: NextAction[] = [];
  if (item.status === 'broken') {
    const broken = item.charts.filter((c) => c.verdict === 'broken');
    const named = broken.slice(0, 3).map((c) => `'${c.name}': ${c.error}`);
    const browserNote =
      item.browser?.verdict === 'failed' ? `the browser check saw charts fail (${item.browser.reason ?? 'no reason given'})` : '';
    const since = item.newly_broken ? 'newly broken' : `broken since ${item.first_seen_broken_at ?? item.checked_at}`;
    const passed = item.last_passed_at ? `last passed ${item.last_passed_at}` : 'never seen passing';
    actions.push({
      action: 'fix_charts',
      description: `Open ${name} in Superset and fix ${broken.length ? broken.map((c) => `'${c.name}'`).join(', ') : 'the charts the browser check names'}: Superset refuses their queries`,
    });
    actions.push(validateAgainAction(ref.envId, [item.id], `Validate ${name} again once it is fixed`));
    const what = [
      broken.length
        ? `${broken.length} of ${item.charts.length} chart(s) fail in Superset: ${named.join('; ')}${broken.length > 3 ? '; …' : ''}`
        : '',
      browserNote,
    ]
      .filter(Boolean)
      .join('; ');
    return { error: `${what} (${since}; ${passed})`, step: 'check', next_actions: actions };
  }
  if (item.totals.not_verifiable && !browserAsked)
    actions.push({
      action: 'browser_check',
      description: `${item.totals.not_verifiable} chart(s) of ${name} could not be checked by their queries: validate with the browser check, which renders them`,
      request: {
        method: 'POST',
        path: `/api/environments/${encodeURIComponent(ref.envId)}/validate`,
        body: { dashboard_ids: [item.id], browser: true },
      },
    });
  return { next_actions: actions };
}

/** Records the item at its position, writes the progress and counts it; answers the brief. */
export async function recordItem(
  deps: Pick<ActivityDeps, 'stores'>,
  taskId: string,
  ref: DashboardRef,
  item: ValidationItem,
  seconds: number | null,
): Promise<ValidationBrief> {
  await deps.stores.taskItems.put(taskId, ref.position, ref.dashboardId, item);
  const progress = { done: ref.position + 1, total: ref.total, message: `dashboard ${ref.dashboardId}: ${item.status}` };
  await deps.stores.tasks.setProgress(taskId, progress);
  const log = Context.current().log;
  log.info(`dashboard ${ref.dashboardId}${item.title ? ` ('${item.title}')` : ''}: ${item.status}${item.error ? ` (${item.error})` : ''}`);
  log.info(progressLogLine(progress));
  for (const c of item.charts) metrics.validationCharts.inc({ environment_id: ref.envId, verdict: c.verdict });
  metrics.validationDashboards.inc({ environment_id: ref.envId, status: item.status });
  if (seconds !== null) metrics.validationDuration.observe({ environment_id: ref.envId }, seconds);
  return briefOf(item);
}

export function briefOf(item: ValidationItem): ValidationBrief {
  return {
    status: item.status,
    newly_broken: item.newly_broken,
    title: item.title,
    ...(item.error ? { error: item.error } : {}),
    ...(item.awaiting_browser ? { browser_pending: true } : {}),
  };
}
