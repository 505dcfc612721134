/**
 * The verification step: what a batch imported, verified while the next batch imports
 * (docs/migration-batching.md), and a git deploy's one dashboard. How a dashboard is verified is
 * the Verifier's (./verifier.ts); how many chart queries go to one environment at once is
 * svc.chartQueries' (./chart-check/limit.ts).
 */
import type { DashboardOutcome, Verification, VerifyBatchInput } from '../../contracts/migration.ts';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { failItem, itemFailure } from '../failures/index.ts';
import type { Log, MigrationServices } from './context.ts';
import type { PrefetchRun } from './prefetch-runs.ts';
import { amendOutcomes, recordStates } from './record.ts';
import { upstreamFor } from './superset-upstream.ts';
import { freshAnswers } from './unchanged-checks.ts';
import type { MigrationUpstream } from './upstream.ts';

/** One dashboard (a git deploy's check), with how long it took; a refusal fails the item at once, an outage is retried. */
export async function verifyDeployed(
  svc: MigrationServices,
  input: { targetEnvId: string; dashboardId: number; expectedChartUuids: string[] },
  log: Log,
): Promise<Verification> {
  const started = Date.now();
  try {
    const target = svc.chartQueries.limited(await upstreamFor(svc.deps, input.targetEnvId), input.targetEnvId);
    const [v] = await svc.verifier.verify(target, [input], log);
    if ('error' in v!) throw v.error;
    return { ...v!, duration_ms: Date.now() - started };
  } catch (err) {
    // A refusal is final for this dashboard (the workflow records it); an outage is retried.
    failItem(itemFailure(err, { step: 'verify', item: `target dashboard ${input.dashboardId}`, envId: input.targetEnvId }));
  }
}

/**
 * Verifies what a run imported (a part of it, one activity): records the target's state for the
 * next run, verifies the dashboards an earlier attempt did not, and amends their outcomes. A
 * dashboard the run found unchanged (`unchanged`) has only its target side checked again: its
 * record stands but for the verification, and its source charts' verdicts are reused by content
 * (./chart-check/source-cache.ts).
 */
export async function verifyImported(
  svc: MigrationServices,
  taskId: string,
  input: VerifyBatchInput,
  log: Log,
): Promise<{ failed: number }> {
  // What the batch made ahead for these dashboards is taken from the task's prefetch plan, and settled before this returns.
  const made = await svc.caches.prefetch.open(taskId, 'verifyMigratedBatch', svc.deps.logger);
  try {
    return await verifyPart(svc, taskId, input, log, made);
  } finally {
    await made.end();
  }
}

async function verifyPart(
  svc: MigrationServices,
  taskId: string,
  input: VerifyBatchInput,
  log: Log,
  made: PrefetchRun,
): Promise<{ failed: number }> {
  const target = await upstreamFor(svc.deps, input.targetEnvId);
  const imported = input.dashboards.flatMap((d) =>
    !d.unchanged && d.plannedHash !== undefined ? [{ ...d, plannedHash: d.plannedHash }] : [],
  );
  await recordStates(svc, taskId, input, imported, target, log, await exportedAhead(made, imported));
  const todo = await unverified(svc, taskId, input);
  const started = Date.now();
  const source = todo.length ? await sourceFor(svc, input.sourceEnvId, log) : undefined;
  // An unchanged dashboard's queries are the ones its last verification sent: asked fresh, not from Superset's data cache (./unchanged-checks.ts).
  const asked = todo.some(({ d }) => d.unchanged) ? freshAnswers(target) : target;
  const verified = await svc.verifier.verify(
    svc.chartQueries.limited(asked, input.targetEnvId),
    todo.map(({ d, stored }) => ({
      dashboardId: d.targetDashboardId,
      expectedChartUuids: stored.chart_uuids,
      sourceDashboardId: d.sourceDashboardId,
    })),
    log,
    source,
    { cache: svc.caches.sourceChecks, envId: input.sourceEnvId },
    made,
  );
  // The batch's verification time, shared by its dashboards (their charts' queries went out together).
  const share = Math.round((Date.now() - started) / Math.max(1, todo.length));
  const now = new Date();
  const amended = todo.map(({ d, stored }, i) => ({ d, ...verifiedOutcome(taskId, input, { d, stored, v: verified[i]!, share, now }) }));
  // Recorded together: in the targets' records (with the time the items say, so a later `if_changed` rerun carries
  // it as this task said it), then in the outcomes; a retry after the first finds the outcomes unverified and verifies again.
  await svc.states.recordVerifications(
    input.targetEnvId,
    amended.map((a) => ({ dashboardUuid: a.d.dashboardUuid, passed: a.passed })),
    taskId,
    now,
  );
  await amendOutcomes(
    svc,
    taskId,
    amended.map((a) => ({ position: a.d.position, outcome: a.outcome })),
  );
  return { failed: amended.filter((a) => !a.passed).length };
}

type Todo = { d: VerifyBatchInput['dashboards'][number]; stored: DashboardOutcome };

/** The dashboards of the part still to verify; those an earlier attempt verified have their result recorded again (recordStates reset it). */
async function unverified(svc: MigrationServices, taskId: string, input: VerifyBatchInput): Promise<Todo[]> {
  const todo: Todo[] = [];
  const recorded = await svc.outcomes.getMany<DashboardOutcome>(
    taskId,
    input.dashboards.map((d) => d.position),
  );
  for (const d of input.dashboards) {
    const stored = recorded.get(d.position);
    if (stored && !stored.verification) todo.push({ d, stored });
    else if (stored?.verification) {
      const at =
        stored.verification_state?.state === 'verified' && stored.verification_state.at
          ? new Date(stored.verification_state.at)
          : undefined;
      await svc.states.recordVerification(input.targetEnvId, d.dashboardUuid, stored.verification.ok, taskId, at);
    }
  }
  return todo;
}

/** One dashboard's outcome once verified, and whether it passed. */
function verifiedOutcome(
  taskId: string,
  input: VerifyBatchInput,
  r: Todo & { v: Verification | { error: unknown }; share: number; now: Date },
): { outcome: DashboardOutcome; passed: boolean } {
  const { d, stored, v, now } = r;
  const verification_state = {
    state: 'verified',
    at: now.toISOString(),
    task_id: taskId,
    checked: d.unchanged ? 'unchanged_target' : 'imported',
  } as const;
  if ('error' in v) {
    // An outage is thrown for a retry; a refusal is this dashboard's verification failure.
    const failure = itemFailure(v.error, { step: 'verify', item: `target dashboard ${d.targetDashboardId}`, envId: input.targetEnvId });
    return { outcome: { ...stored, status: failedStatus(d), verification_state, ...failure }, passed: false };
  }
  const verification = { ...v, duration_ms: r.share };
  const failedNow = v.ok ? {} : { status: failedStatus(d), ...(d.unchanged ? brokenUnder(stored, verification) : {}) };
  return { outcome: { ...stored, verification, verification_state, ...failedNow }, passed: v.ok };
}

/** How a dashboard whose verification failed ends: imported with errors, or unchanged with errors (nothing was imported). */
function failedStatus(d: VerifyBatchInput['dashboards'][number]): DashboardOutcome['status'] {
  return d.unchanged ? 'unchanged_with_errors' : 'imported_with_errors';
}

/** An unchanged dashboard whose target, checked again, fails: what changed under it, and what to do. */
function brokenUnder(stored: DashboardOutcome, v: Verification): Pick<DashboardOutcome, 'step' | 'error' | 'next_actions'> {
  const broken = v.charts.filter((c) => !c.ok);
  const named = broken
    .slice(0, 3)
    .map((c) => `'${c.name}': ${c.error ?? c.reason ?? 'fails'}`)
    .join('; ');
  const what = v.dashboard_present
    ? `${broken.length} chart(s) run in the source but no longer in the target${named ? ` (${named})` : ''}${v.charts_linked < v.charts_expected ? `; ${v.charts_linked}/${v.charts_expected} charts linked` : ''}`
    : 'the dashboard is no longer in the target';
  return {
    step: 'verify',
    error: `unchanged since its last migration, but the target changed under it: ${what}`,
    next_actions: [
      ...stored.next_actions,
      {
        action: 'fix_target',
        description:
          'Restore what the charts read in the target (a table, a column, a dataset), then migrate it again: the rerun imports and verifies it',
      },
    ],
  };
}

/** The target's exports the batch's checks made after its writes (./target-checks-ahead.ts), by target dashboard id; taken once. */
async function exportedAhead(made: PrefetchRun, dashboards: ReadonlyArray<{ targetDashboardId: number }>): Promise<Map<number, Bundle>> {
  const out = new Map<number, Bundle>();
  for (const d of dashboards) {
    const kept = await made.take('targetExport', d.targetDashboardId);
    if (kept) out.set(d.targetDashboardId, kept);
  }
  return out;
}

/** The source to check each chart against; without it (it cannot be opened) a failing chart cannot be told from one failing there too. */
async function sourceFor(svc: MigrationServices, envId: string, log: Log): Promise<MigrationUpstream | undefined> {
  try {
    return svc.chartQueries.limited(await upstreamFor(svc.deps, envId), envId);
  } catch (err) {
    log.warn(`the source could not be opened to compare the charts with: ${(err as Error).message}`);
    return undefined;
  }
}
