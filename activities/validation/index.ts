/**
 * The content validator's activities (`validate` tasks): the dashboards to check, one
 * dashboard's check recorded as its item (task_items), the browser check's verdict added to it,
 * and the environment's failing count for the metrics. Chart queries go through the worker's one
 * per-environment bound (VERIFY_CONCURRENCY), shared with migrations' verifications.
 */
import { Context } from '@temporalio/activity';
import type { BrowserCheck } from '../../contracts/browser-check.ts';
import type { ValidationBrief, ValidationItem, ValidationSelection } from '../../contracts/validation.ts';
import { metrics } from '../../lib/telemetry/metrics.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { type ChartQueryGates, sharedChartQueryGates, upstreamFor } from '../../domain/migration/index.ts';
import { itemFailure } from '../../domain/failures/index.ts';
import { currentTaskId } from '../task-context.ts';
import { validationCandidates } from './candidates.ts';
import { checkDashboardCharts } from './check.ts';
import { briefOf, checkedItem, failedItem, recordItem, withHistory, type DashboardRef } from './record.ts';

export function createValidationActivities(deps: ActivityDeps) {
  const gates = sharedChartQueryGates(deps.config.VERIFY_CONCURRENCY);
  return {
    validationCandidates: (input: { envId: string; selection: ValidationSelection }) => validationCandidates(deps, input),

    /**
     * One dashboard checked and recorded at its position; with `browser`, recorded as awaiting
     * the browser check (finishBrowserValidation completes it). A retry answers what is recorded.
     */
    validateDashboardOfTask: (input: DashboardRef & { browser: boolean }) => beating(() => validateDashboard(deps, gates, input)),

    /** The browser check's verdict added to the dashboard's recorded query check, then its history and record. */
    async finishBrowserValidation(input: DashboardRef & { browser: BrowserCheck }): Promise<ValidationBrief> {
      const taskId = currentTaskId();
      const recorded = await deps.stores.taskItems.get<ValidationItem>(taskId, input.position);
      if (!recorded) throw new Error(`dashboard ${input.dashboardId} has no recorded check at position ${input.position}`);
      if (!recorded.awaiting_browser) return briefOf(recorded);
      const item = checkedItem(input, { title: recorded.title, charts: recorded.charts }, input.browser);
      return recordItem(deps, taskId, input, await withHistory(deps, taskId, input, item, true), null);
    },

    /** Dashboards of the environment whose latest proven verdict is broken: the failing gauge, set as a validation ends. */
    async validationFailing(input: { envId: string }): Promise<number> {
      const rows = await deps.stores.validationVerdicts.dashboards(input.envId);
      const failing = rows.filter((r) => r.first_seen_broken_at !== null).length;
      metrics.validationFailing.set({ environment_id: input.envId }, failing);
      return failing;
    },
  };
}

async function validateDashboard(
  deps: ActivityDeps,
  gates: ChartQueryGates,
  input: DashboardRef & { browser: boolean },
): Promise<ValidationBrief> {
  const taskId = currentTaskId();
  const earlier = await deps.stores.taskItems.get<ValidationItem>(taskId, input.position);
  if (earlier) return briefOf(earlier);
  const started = performance.now();
  let item: ValidationItem;
  try {
    const up = gates.limited(await upstreamFor(deps, input.envId), input.envId);
    item = checkedItem(
      input,
      await checkDashboardCharts(up, input.dashboardId, { maxBundleBytes: maxBundleBytes(deps), log: Context.current().log }),
    );
  } catch (err) {
    const failure = itemFailure(err, { step: 'check', item: `dashboard ${input.dashboardId}`, envId: input.envId });
    return recordItem(deps, taskId, input, failedItem(input, failure), null);
  }
  if (input.browser) {
    await deps.stores.taskItems.put(taskId, input.position, input.dashboardId, { ...item, awaiting_browser: true });
    return { ...briefOf(item), browser_pending: true };
  }
  return recordItem(deps, taskId, input, await withHistory(deps, taskId, input, item, false), (performance.now() - started) / 1000);
}

/** Heartbeats while a dashboard is checked: its charts may wait long at the environment's query bound. */
async function beating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), 10_000);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}
