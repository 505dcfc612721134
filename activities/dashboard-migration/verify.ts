/**
 * The verification step: what a batch imported, verified while the next batch imports
 * (docs/migration-batching.md), and a git deploy's one dashboard. How a dashboard is verified is
 * the Verifier's (./verifier.ts); how many chart queries go to one environment at once is
 * svc.chartQueries' (./chart-check/limit.ts).
 */
import type { DashboardOutcome, Verification, VerifyBatchInput } from '../../contracts/migration.ts';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { failItem, itemFailure } from '../item-failure.ts';
import type { Log, MigrationServices } from './context.ts';
import { amendOutcome, recordStates } from './record.ts';
import { upstreamFor } from './superset-upstream.ts';
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
 * next run, verifies the dashboards an earlier attempt did not, and amends their outcomes.
 */
export async function verifyImported(
  svc: MigrationServices,
  taskId: string,
  input: VerifyBatchInput,
  log: Log,
): Promise<{ failed: number }> {
  const target = await upstreamFor(svc.deps, input.targetEnvId);
  await recordStates(svc, taskId, input, input.dashboards, target, log, await exportedAhead(svc, taskId, input.dashboards));
  let failed = 0;
  const todo: Array<{ d: VerifyBatchInput['dashboards'][number]; stored: DashboardOutcome }> = [];
  const recorded = await svc.outcomes.getMany<DashboardOutcome>(
    taskId,
    input.dashboards.map((d) => d.position),
  );
  for (const d of input.dashboards) {
    const stored = recorded.get(d.position);
    if (stored && !stored.verification) todo.push({ d, stored });
    // Verified by an earlier attempt: its result is recorded again (recordStates reset it).
    else if (stored?.verification) await svc.states.recordVerification(input.targetEnvId, d.dashboardUuid, stored.verification.ok);
  }
  const started = Date.now();
  const source = todo.length ? await sourceFor(svc, input.sourceEnvId, log) : undefined;
  const verified = await svc.verifier.verify(
    svc.chartQueries.limited(target, input.targetEnvId),
    todo.map(({ d, stored }) => ({
      dashboardId: d.targetDashboardId,
      expectedChartUuids: stored.chart_uuids,
      sourceDashboardId: d.sourceDashboardId,
    })),
    log,
    source,
    { cache: svc.caches.sourceChecks, envId: input.sourceEnvId, taskId },
    { cache: svc.caches.targetChecks, taskId },
  );
  const took = Date.now() - started;
  for (const [i, { d, stored }] of todo.entries()) {
    const v = verified[i]!;
    if ('error' in v) {
      // An outage is thrown for a retry; a refusal is this dashboard's verification failure.
      const failure = itemFailure(v.error, { step: 'verify', item: `target dashboard ${d.targetDashboardId}`, envId: input.targetEnvId });
      await amendOutcome(svc, taskId, d.position, { ...stored, status: 'imported_with_errors', ...failure });
      await svc.states.recordVerification(input.targetEnvId, d.dashboardUuid, false);
      failed++;
      continue;
    }
    if (!v.ok) failed++;
    await svc.states.recordVerification(input.targetEnvId, d.dashboardUuid, v.ok);
    // The batch's verification time, shared by its dashboards (their charts' queries went out together).
    const verification = { ...v, duration_ms: Math.round(took / todo.length) };
    await amendOutcome(svc, taskId, d.position, { ...stored, verification, ...(v.ok ? {} : { status: 'imported_with_errors' }) });
  }
  return { failed };
}

/** The target's exports the batch's checks made after its writes (./target-checks-ahead.ts), by target dashboard id; taken once. */
async function exportedAhead(
  svc: MigrationServices,
  taskId: string,
  dashboards: VerifyBatchInput['dashboards'],
): Promise<Map<number, Bundle>> {
  const out = new Map<number, Bundle>();
  for (const d of dashboards) {
    const kept = await svc.caches.targetChecks.exports.take(taskId, d.targetDashboardId);
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
