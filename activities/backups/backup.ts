import { Context } from '@temporalio/activity';
import { failedBackupItem, type BackupItem, type BackupItemBrief } from '../../contracts/backup.ts';
import type { ItemFailure } from '../../contracts/failures.ts';
import { progressLogLine } from '../../contracts/tasks.ts';
import type { BackupRow } from '../../db/backups/store.ts';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import { chartUuidsOf } from '../../lib/bundles/rewrite.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { itemFailure } from '../../domain/failures/index.ts';
import { type TargetIndexCache, upstreamFor } from '../../domain/migration/index.ts';
import { currentTaskId } from '../task-context.ts';
import { formatBytes } from './format.ts';
import { attachCompanions } from './companions.ts';
import { attachRules } from './rls.ts';

/** What backing up needs beside the worker's deps: the environment's datasets and rules, read once per backup task in this worker. */
export type BackupDeps = ActivityDeps & { indexes: TargetIndexCache };

type BackupAnswer = { item: BackupItem; store: string };

/**
 * Exports one dashboard and stores it. A Superset outage is thrown (Temporal retries it); a
 * refusal (no such dashboard, no permission) or an unusable bundle is returned as this
 * dashboard's failure.
 */
export async function backupDashboard(deps: BackupDeps, input: { envId: string; dashboardId: number }): Promise<BackupAnswer> {
  const { log } = Context.current();
  const taskId = currentTaskId();
  const s = deps.backupStore();
  const previous = await deps.stores.backups.ofTask(taskId, input.dashboardId);
  if (previous) {
    log.info(`dashboard ${input.dashboardId} was already backed up by an earlier attempt of this task (backup ${previous.id})`);
    return { item: itemOf(previous), store: s.location };
  }
  const exported = await exportWithRules(deps, input);
  if ('failed' in exported) return { item: exported.failed, store: s.location };
  const { zip, bundle, dashboardFile, title, rlsRules, companions } = exported;
  const c = dashboardFile.content;
  const hash = bundle.contentHash();
  const { row } = await deps.stores.backups.record(s, {
    taskId,
    envId: input.envId,
    dashboardId: input.dashboardId,
    dashboardUuid: typeof c.uuid === 'string' ? c.uuid : null,
    title,
    slug: typeof c.slug === 'string' && c.slug ? c.slug : null,
    contentHash: hash,
    chartCount: chartUuidsOf(dashboardFile).length,
    bytes: zip,
  });
  log.info(
    row.deduplicated
      ? `dashboard ${input.dashboardId} ('${title}') is unchanged since an earlier backup: recorded backup ${row.id}, stored nothing new (sha256 ${hash.slice(0, 12)}…)`
      : `dashboard ${input.dashboardId} ('${title}'): stored ${formatBytes(row.size)} with ${row.chart_count} chart(s) as backup ${row.id} (sha256 ${hash.slice(0, 12)}…) in ${s.location}`,
  );
  return { item: { ...itemOf(row), rls_rules: rlsRules, companions }, store: s.location };
}

/**
 * Superset's export of the dashboard with its datasets' row-level-security rules kept beside it
 * (no export carries them), or this dashboard's failed item (logged).
 */
type Exported = { zip: Uint8Array; bundle: Bundle; dashboardFile: BundleFile; title: string; rlsRules: number; companions: number };

async function exportWithRules(
  deps: BackupDeps,
  input: { envId: string; dashboardId: number },
): Promise<Exported | { failed: BackupItem }> {
  const { log } = Context.current();
  const item = `dashboard ${input.dashboardId}`;
  const exported = await exportBundle(deps, input);
  if ('failed' in exported) return exported;
  const { bundle, dashboardFile } = exported;
  const c = dashboardFile.content;
  const title = typeof c.dashboard_title === 'string' ? c.dashboard_title : `dashboard ${input.dashboardId}`;
  // The stored zip then holds the rules too.
  let rlsRules = 0;
  try {
    const upstream = await upstreamFor(deps, input.envId);
    rlsRules = await attachRules(
      upstream,
      bundle,
      await deps.indexes.get(`${currentTaskId()}:${input.envId}`, upstream, { kinds: ['dataset'] }),
    );
  } catch (err) {
    const failure = itemFailure(err, { step: 'rls', item: `the row-level-security rules of ${item}`, envId: input.envId });
    log.error(`${item}: ${failure.error}`);
    return { failed: { ...failedBackupItem(input.dashboardId, failure), title } };
  }
  if (rlsRules) log.info(`dashboard ${input.dashboardId}: kept ${rlsRules} row-level-security rule(s) on its datasets`);
  // Its companions (owners, roles, tags, reports, layers, templates, queries) beside them.
  let companions = 0;
  try {
    companions = await attachCompanions(await deps.superset(input.envId), input.dashboardId, bundle, title);
  } catch (err) {
    const failure = itemFailure(err, { step: 'companions', item: `the companions of ${item}`, envId: input.envId });
    log.error(`${item}: ${failure.error}`);
    return { failed: { ...failedBackupItem(input.dashboardId, failure), title } };
  }
  return { zip: bundle.toZip(), bundle, dashboardFile, title, rlsRules, companions };
}

/** Superset's export of one dashboard, read into a bundle; a failed export or one without its dashboard fails the item at `export`. */
async function exportBundle(
  deps: BackupDeps,
  input: { envId: string; dashboardId: number },
): Promise<{ bundle: Bundle; dashboardFile: BundleFile } | { failed: BackupItem }> {
  const { log } = Context.current();
  const item = `dashboard ${input.dashboardId}`;
  let bundle: Bundle;
  try {
    const upstream = await upstreamFor(deps, input.envId);
    log.info(`exporting dashboard ${input.dashboardId}`);
    const zip = await upstream.exportDashboards([input.dashboardId]);
    Context.current().heartbeat();
    bundle = Bundle.fromZip(zip, maxBundleBytes(deps));
  } catch (err) {
    const failure = itemFailure(err, { step: 'export', item, envId: input.envId });
    log.error(`${item}: ${failure.error}`);
    return { failed: failedBackupItem(input.dashboardId, failure) };
  }
  const dashboardFile = bundle.of('dashboards')[0];
  if (!dashboardFile) {
    const failure: ItemFailure = {
      step: 'export',
      error: `Superset's export of dashboard ${input.dashboardId} holds no dashboard`,
      next_actions: [],
    };
    log.error(failure.error);
    return { failed: failedBackupItem(input.dashboardId, failure) };
  }
  return { bundle, dashboardFile };
}

/**
 * One dashboard of a backup task: backs it up, records its item in `task_items` at its
 * position and writes the task's progress, all here, so the workflow gets a brief answer and
 * spends one activity per dashboard. A retry finds the item of an earlier attempt and answers it.
 */
export async function backupDashboardOfTask(
  deps: BackupDeps,
  input: { envId: string; dashboardId: number; position: number; total: number },
): Promise<BackupItemBrief> {
  const taskId = currentTaskId();
  const brief = (item: BackupItem, store: string): BackupItemBrief => ({
    status: item.status,
    deduplicated: item.deduplicated,
    store,
    ...(item.error ? { error: item.error } : {}),
  });
  const earlier = await deps.stores.taskItems.get<BackupItem>(taskId, input.position);
  if (earlier) return brief(earlier, deps.backupStore().location);
  const r = await backupDashboard(deps, input);
  const item = await deps.stores.taskItems.record(taskId, input.position, input.dashboardId, r.item);
  const progress = { done: input.position + 1, total: input.total, message: `dashboard ${input.dashboardId}: ${item.status}` };
  await deps.stores.tasks.setProgress(taskId, progress);
  Context.current().log.info(progressLogLine(progress));
  return brief(item, r.store);
}

function itemOf(row: BackupRow): BackupItem {
  return {
    kind: 'dashboard',
    id: row.dashboard_id,
    title: row.dashboard_title,
    status: 'succeeded',
    outcome: 'succeeded',
    next_actions: [],
    backup_id: row.id,
    content_hash: row.content_hash.trim(),
    deduplicated: row.deduplicated,
    size: row.size,
    charts: row.chart_count,
  };
}
