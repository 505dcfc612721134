/**
 * A dashboard told unchanged whose companions were then written: what they wrote shows in the
 * target's export (a chart's annotation layer ids, the dashboard's theme, certification), so the
 * record's target hash is taken again. Without it the next run sees the target changed since the
 * last import and imports the dashboard once more, although nothing changed in between.
 */
import type { CompanionKindReport } from '../../contracts/companions.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import { maxBundleBytes } from './deps.ts';
import type { Log, MigrationServices } from './context.ts';
import type { MigrationUpstream } from './upstream.ts';

/** Whether a companion was written into the target by this run. */
export function wroteCompanions(reports: readonly CompanionKindReport[] | undefined): boolean {
  return (reports ?? []).some((r) => r.items.some((i) => i.done));
}

/** The target's export of these dashboards, one call for all, hashed into their records. Best effort, as recordStates is. */
export async function rehashAfterCompanions(
  svc: Pick<MigrationServices, 'deps' | 'states'>,
  targetEnvId: string,
  target: MigrationUpstream,
  written: Array<{ targetDashboardId: number; dashboardUuid: string }>,
  log: Log,
): Promise<void> {
  if (!written.length) return;
  try {
    const byId = splitByDashboard(
      Bundle.fromZip(await target.exportDashboards(written.map((w) => w.targetDashboardId)), maxBundleBytes(svc.deps)),
    );
    for (const w of written) {
      const after = byId.get(w.targetDashboardId);
      if (after) await svc.states.retarget(targetEnvId, w.dashboardUuid, after.contentHash());
    }
  } catch (err) {
    log.warn(
      `could not record the target after writing companions (the next run imports those dashboards again): ${(err as Error).message}`,
    );
  }
}
