import { Context } from '@temporalio/activity';
import type { ReleaseItem } from '../../contracts/clean-release.ts';
import { restoreBackup } from '../backups/index.ts';
import type { ActivityDeps } from '../deps.ts';
import { itemFailure } from '../../domain/failures/index.ts';
import { upstreamFor } from '../../domain/migration/index.ts';

/** Puts back what a publish replaced (its backup), or removes a dashboard the publish created. */
export async function revokeReleaseArtifact(
  deps: ActivityDeps,
  input: { candidateId: string; dashboardUuid: string },
): Promise<ReleaseItem> {
  const { log } = Context.current();
  const p = (await deps.stores.cleanRelease.publications(input.candidateId)).find((x) => x.dashboard_uuid === input.dashboardUuid);
  const item: ReleaseItem = {
    kind: 'dashboard',
    id: input.dashboardUuid,
    title: null,
    status: 'failed',
    outcome: 'failed',
    next_actions: [],
    sha256: null,
    target_dashboard_id: p?.target_dashboard_id ?? null,
    backup_id: p?.backup_id ?? null,
  };
  if (!p) return { ...item, step: 'read', error: 'this dashboard was not published by the candidate' };
  if (p.backup_id) {
    const r = await restoreBackup(deps, { backupId: p.backup_id, envId: p.env_id, dashboardId: p.target_dashboard_id ?? 0 });
    if (r.outcome !== 'succeeded')
      return {
        ...item,
        title: r.title,
        step: r.step ?? 'restore',
        error: r.error,
        upstream_error: r.upstream_error,
        next_actions: r.next_actions,
      };
    log.info(`restored dashboard ${input.dashboardUuid} in ${p.env_id} from backup ${p.backup_id}`);
    return { ...item, title: r.title, status: 'revoked', outcome: 'succeeded', target_dashboard_id: r.restored_dashboard_id };
  }
  try {
    const client = await deps.superset(p.env_id);
    const there = await (await upstreamFor(deps, p.env_id)).findDashboard(input.dashboardUuid);
    if (there) await client.dashboards.delete(there.id);
    log.info(`removed dashboard ${input.dashboardUuid} from ${p.env_id}: the publish had created it`);
    return { ...item, status: 'removed', outcome: 'succeeded', target_dashboard_id: null };
  } catch (err) {
    return { ...item, ...itemFailure(err, { step: 'delete', item: `dashboard ${input.dashboardUuid}`, envId: p.env_id }) };
  }
}

/** The candidate's state after its publish or revoke task (a no-op when something else moved it). */
export async function settleRelease(
  deps: Pick<ActivityDeps, 'stores'>,
  input: { candidateId: string; mode: 'publish' | 'revoke'; failed: number },
): Promise<void> {
  const store = deps.stores.cleanRelease;
  if (input.mode === 'publish') await store.settle(input.candidateId, ['publishing'], input.failed ? 'publish_failed' : 'published');
  else await store.settle(input.candidateId, ['revoking'], input.failed ? 'published' : 'revoked');
}
