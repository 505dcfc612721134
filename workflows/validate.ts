import { CancellationScope, continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { NON_RETRYABLE_FAILURE_TYPES } from '../contracts/failures.ts';
import {
  emptyCounts,
  validateAgainAction,
  type ValidateInput,
  type ValidateRunState,
  type ValidateSummary,
  type ValidationBrief,
  type ValidationItem,
} from '../contracts/validation.ts';
import { failureOf } from './item-failure.ts';
import { endTaskWithStoredItems, reportTaskProgress, runAsTask } from './task-run.ts';

/** One dashboard = one activity; Superset outages are retried, a refusal is that dashboard's outcome. */
const perDashboard = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURE_TYPES,
  },
});

const browserCheck = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 },
});

const housekeeping = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * Dashboards checked at once: their chart queries all pass the environment's one bound
 * (VERIFY_CONCURRENCY), so this only keeps enough queries waiting to use it.
 */
const DASHBOARDS_AT_ONCE = 4;
/** Broken or failed dashboards named in the task's error message; the result lists every one. */
const MAX_FAILURES_NAMED = 20;

/**
 * A validation: every selected dashboard of one environment checked with the migration's chart
 * checks (and the browser check on request), nothing written to Superset. Items go to
 * `task_items` from the activities; the workflow continues as new every `taskItemsPerRun()`
 * dashboards carrying counters only, so a 1,000-dashboard environment keeps a bounded history.
 * The task ends FAILED when a dashboard is broken or could not be checked (every item is in the result).
 */
export async function validateWorkflow(input: ValidateInput): Promise<ValidateSummary> {
  return runAsTask(
    async () => {
      const { dashboardIds, state } = input.continued ?? (await firstRun(input));
      let reached = 0;
      let cancelled = false;
      while (reached < dashboardIds.length) {
        if (CancellationScope.current().consideredCancelled) {
          cancelled = true;
          break;
        }
        if (reached >= state.itemsPerRun || (reached > 0 && workflowInfo().continueAsNewSuggested)) break;
        const wave = dashboardIds.slice(reached, Math.min(reached + DASHBOARDS_AT_ONCE, state.itemsPerRun));
        const at = state.offset + reached;
        // A wave in flight runs to the end even when a cancel arrives; the loop stops before the next.
        const briefs = await CancellationScope.nonCancellable(() =>
          Promise.all(wave.map((id, k) => validateOne(input, id, at + k, state.requested))),
        );
        briefs.forEach((b, k) => count(state, wave[k]!, b));
        reached += wave.length;
      }
      if (!cancelled && reached < dashboardIds.length) {
        log.info(`continuing as a new workflow run (${state.run + 1}) after ${state.offset + reached} of ${state.requested} dashboards`);
        return await continueAsNew<typeof validateWorkflow>({
          ...input,
          continued: { dashboardIds: dashboardIds.slice(reached), state: { ...state, offset: state.offset + reached, run: state.run + 1 } },
        });
      }
      return await finish(input, state, cancelled);
    },
    { items: 'stored' },
  );
}

async function firstRun(input: ValidateInput): Promise<{ dashboardIds: number[]; state: ValidateRunState }> {
  const dashboardIds = await perDashboard.validationCandidates({ envId: input.envId, selection: input.selection });
  const [itemsPerRun] = await Promise.all([
    housekeeping.taskItemsPerRun(),
    reportTaskProgress({ done: 0, total: dashboardIds.length, message: `validating ${dashboardIds.length} dashboard(s)` }),
  ]);
  if (!dashboardIds.length) log.info('no dashboard of the environment matches the selection: nothing to validate');
  return {
    dashboardIds,
    state: { offset: 0, requested: dashboardIds.length, itemsPerRun, run: 1, counts: emptyCounts(), newlyBroken: 0, firstFailures: [] },
  };
}

/** One dashboard: its query check, then (asked for, and the queries could be read) its browser check. */
async function validateOne(input: ValidateInput, dashboardId: number, position: number, total: number): Promise<ValidationBrief> {
  const ref = { envId: input.envId, dashboardId, position, total };
  try {
    const brief = await perDashboard.validateDashboardOfTask({ ...ref, browser: input.browser });
    if (!brief.browser_pending) return brief;
    const browser = await browserCheck.browserCheckDashboard({ targetEnvId: input.envId, dashboardId });
    return await perDashboard.finishBrowserValidation({ ...ref, browser });
  } catch (err) {
    // Retries spent (Superset away all along): the dashboard's failure with Superset's message, never a verdict.
    const failure = failureOf(err, 'check');
    const item: ValidationItem = {
      kind: 'dashboard',
      id: dashboardId,
      title: null,
      status: 'failed',
      outcome: 'failed',
      checked_at: new Date().toISOString(),
      charts: [],
      totals: { passed: 0, broken: 0, not_verifiable: 0 },
      first_seen_broken_at: null,
      last_passed_at: null,
      newly_broken: false,
      ...failure,
      next_actions: [
        ...failure.next_actions,
        validateAgainAction(input.envId, [dashboardId], 'Validate this dashboard again once Superset answers'),
      ],
    };
    log.error(`dashboard ${dashboardId}: could not be validated: ${item.error}`);
    await housekeeping.recordTaskItem({ position, key: dashboardId, item });
    await reportTaskProgress({ done: position + 1, total, message: `dashboard ${dashboardId}: failed` });
    return { status: 'failed', newly_broken: false, title: null, error: item.error };
  }
}

function count(state: ValidateRunState, dashboardId: number, b: ValidationBrief): void {
  state.counts[b.status]++;
  if (b.newly_broken) state.newlyBroken++;
  if ((b.status === 'broken' || b.status === 'failed') && state.firstFailures.length < MAX_FAILURES_NAMED)
    state.firstFailures.push(`${dashboardId}${b.title ? ` '${b.title}'` : ''} ${b.status} (${(b.error ?? '').slice(0, 300)})`);
}

async function finish(input: ValidateInput, state: ValidateRunState, cancelled: boolean): Promise<ValidateSummary> {
  const done = Object.values(state.counts).reduce((a, b) => a + b, 0);
  const notStarted = state.requested - done;
  await CancellationScope.nonCancellable(() => housekeeping.validationFailing({ envId: input.envId }));
  const bad = state.counts.broken + state.counts.failed;
  const summary: ValidateSummary = {
    env_id: input.envId,
    selection: input.selection,
    totals: { requested: state.requested, ...state.counts, newly_broken: state.newlyBroken, not_started: notStarted },
    not_started: notStarted,
    cancelled,
    next_actions: bad
      ? [
          {
            action: 'validate_failed_again',
            description: `Validate the ${bad} broken or unchecked dashboard(s) again once fixed (the items name each one's request)`,
          },
        ]
      : [],
  };
  if (cancelled)
    await endTaskWithStoredItems(
      'CANCELLED',
      summary,
      `cancelled after ${done} of ${state.requested} dashboards; the rest were not validated`,
    );
  if (bad) {
    const more = bad - state.firstFailures.length;
    await endTaskWithStoredItems(
      'FAILED',
      summary,
      `${state.counts.broken} dashboard(s) broken (${state.newlyBroken} newly), ${state.counts.failed} could not be checked, of ${state.requested}: ${state.firstFailures.join('; ')}${more > 0 ? `; and ${more} more (every one is in the result)` : ''}`,
      'ValidationFailed',
    );
  }
  return summary;
}
