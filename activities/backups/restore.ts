import { Context } from '@temporalio/activity';
import type { RestoreInput, RestoreItem } from '../../contracts/backup.ts';
import type { ItemFailure } from '../../contracts/failures.ts';
import { uniqueActions } from '../../contracts/outcomes.ts';
import type { RlsRuleView } from '../../contracts/rls.ts';
import type { BackupRow } from '../../db/backups/store.ts';
import { BlobNotFoundError } from '../../lib/backup-store/index.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { failItem, itemFailure } from '../../domain/failures/index.ts';
import { type MigrationUpstream, missingRoles, TargetIndex, upstreamFor, writeRules } from '../../domain/migration/index.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { formatBytes } from './format.ts';
import { findRestoreBlockers } from './restore-checks.ts';
import { checkKeptCompanions, type KeptCompanions, putBackCompanions, takeCompanions } from './companions.ts';
import { takeRules } from './rls.ts';

/** A stored backup read back and held to its content hash, ready to import. */
interface StoredBackup {
  backup: BackupRow;
  /** The item as it stands before anything is imported (failed until the restore succeeds). */
  base: RestoreItem;
  bundle: Bundle;
  /** What Superset imports: the stored zip without the kept row-level-security rules. */
  zip: Uint8Array;
  uuid: string;
  /** The rules the backup kept, out of what Superset imports, and the datasets they may touch. */
  rules: RlsRuleView[];
  scope: string[];
  /** The companions the backup kept (./companions.ts), out of what Superset imports; null when it kept none. */
  companions: KeptCompanions | null;
}

/**
 * Imports a stored backup with overwrite into its environment. Idempotent: importing the same
 * bundle again converges to the same state (Superset matches every object by UUID).
 */
export async function restoreBackup(deps: ActivityDeps, input: RestoreInput): Promise<RestoreItem> {
  const stored = await readBackup(deps, input);
  if ('failed' in stored) return stored.failed;
  const at = { step: 'check' };
  try {
    return await restoreInto(deps, input, stored, at);
  } catch (err) {
    return failed(stored, itemFailure(err, { step: at.step, item: `dashboard '${stored.backup.dashboard_title}'`, envId: input.envId }));
  }
}

/** The restore's failed item, logged. */
function failed(stored: Pick<StoredBackup, 'backup' | 'base'>, failure: ItemFailure): RestoreItem {
  Context.current().log.error(`restore of backup ${stored.backup.id}: ${failure.error}`);
  return { ...stored.base, ...failure };
}

/** The backup's row and bundle from the configured store; an unknown backup fails the task, an unreadable one this item. */
async function readBackup(deps: ActivityDeps, input: RestoreInput): Promise<StoredBackup | { failed: RestoreItem }> {
  const backup = await deps.stores.backups.get(input.backupId);
  if (!backup) {
    failItem({
      step: 'read_backup',
      error: `backup ${input.backupId} does not exist (any more)`,
      next_actions: [
        {
          action: 'list_backups',
          description: "List the dashboard's backups and restore one that exists",
          request: { method: 'GET', path: `/api/dashboards/${input.dashboardId}/backups?env_id=${input.envId}`, body: null },
        },
      ],
    });
  }
  const base: RestoreItem = {
    kind: 'dashboard',
    id: backup.dashboard_id,
    title: backup.dashboard_title,
    status: 'failed',
    outcome: 'failed',
    next_actions: [],
    backup_id: backup.id,
    dashboard_uuid: backup.dashboard_uuid,
    restored_dashboard_id: null,
  };
  const fail = (failure: ItemFailure) => ({ failed: failed({ backup, base }, failure) });
  const s = deps.backupStore();
  if (backup.store_kind !== s.kind)
    return fail({
      step: 'read_backup',
      error: `backup ${backup.id} lives in the ${backup.store_kind} store, but the ${s.kind} store is configured now`,
      next_actions: [],
    });
  let zip: Uint8Array;
  let bundle: Bundle;
  try {
    zip = await s.get(backup.content_hash);
    bundle = Bundle.fromZip(zip, maxBundleBytes(deps));
  } catch (err) {
    if (err instanceof BlobNotFoundError) return fail({ step: 'read_backup', error: err.message, next_actions: [] });
    return fail(itemFailure(err, { step: 'read_backup', item: `backup ${backup.id}`, envId: input.envId }));
  }
  if (bundle.contentHash() !== backup.content_hash) {
    return fail({
      step: 'read_backup',
      error: `the stored bundle of backup ${backup.id} does not match its content hash ${backup.content_hash}: it was altered or corrupted`,
      next_actions: [],
    });
  }
  const uuid = String(bundle.of('dashboards')[0]?.content.uuid ?? backup.dashboard_uuid);
  const rules = takeRules(bundle);
  const companions = takeCompanions(bundle);
  // Documents of a format this release cannot read are refused, not dropped: nothing is imported.
  if (companions && 'unreadable' in companions) return fail({ step: 'read_backup', error: companions.unreadable, next_actions: [] });
  if (rules.length || companions) zip = bundle.toZip();
  const scope = bundle.of('datasets').map((f) => String(f.content.uuid));
  return { backup, base, bundle, zip, uuid, rules, scope, companions };
}

/** Checks, imports, verifies and puts the rules back; `at` follows the step for the caller's failure. */
async function restoreInto(deps: ActivityDeps, input: RestoreInput, stored: StoredBackup, at: { step: string }): Promise<RestoreItem> {
  const { log } = Context.current();
  const { backup, base, rules } = stored;
  const upstream = await upstreamFor(deps, input.envId);
  const before = await upstream.findDashboard(stored.uuid);
  const blocked = await takenOver(upstream, stored, before?.id ?? null);
  if (blocked) return blocked;
  const rlsIndex = rules.length ? await TargetIndex.build(upstream, { kinds: ['dataset'] }) : undefined;
  const missing = rlsIndex ? await rolesMissing(rlsIndex, stored, before?.id ?? null) : null;
  if (missing) return missing;
  const client = stored.companions ? await deps.superset(input.envId) : null;
  const companionRoles = client ? await companionRolesMissing(client, input.envId, stored, before?.id ?? null) : null;
  if (companionRoles) return companionRoles;
  log.info(
    `importing backup ${backup.id} of '${backup.dashboard_title}' (${formatBytes(backup.size)}) with overwrite${before ? ` over dashboard ${before.id}` : ' (the dashboard no longer exists: re-creating it)'}`,
  );
  Context.current().heartbeat();
  at.step = 'import';
  await upstream.importBundle('dashboard', stored.zip, true);
  at.step = 'verify';
  const after = await upstream.findDashboard(stored.uuid);
  if (!after)
    return failed(stored, {
      step: 'verify',
      error: `Superset accepted the import but dashboard ${stored.uuid} is not in the environment`,
      next_actions: [],
    });
  const charts = await upstream.dashboardCharts(after.id);
  log.info(`restored '${backup.dashboard_title}' as dashboard ${after.id} with ${charts.length} chart(s)`);
  let restored: RestoreItem = { ...base, restored_dashboard_id: after.id, recreated: !before, charts: charts.length };
  if (client && stored.companions) {
    at.step = 'companions';
    const put = await putBackCompanions(client, input.envId, stored.companions, stored.bundle, backup.dashboard_title, log);
    const next_actions = uniqueActions([...restored.next_actions, ...put.next_actions]);
    restored = { ...restored, companions: put.reports, next_actions };
    if (put.refused.length)
      return {
        ...restored,
        step: 'companions',
        error: `restored as dashboard ${after.id}, but some of its companions were not put back: ${put.refused.join('; ')}`,
      };
    at.step = 'verify';
  }
  if (!rlsIndex) return { ...restored, status: 'restored', outcome: 'succeeded' };
  at.step = 'rls';
  return putBackRules({ upstream, rlsIndex, stored, restored, envId: input.envId, dashboardId: after.id });
}

/** The item when restoring would take over objects that now belong to something else, else null. */
async function takenOver(upstream: MigrationUpstream, stored: StoredBackup, beforeId: number | null): Promise<RestoreItem | null> {
  const blockers = await findRestoreBlockers(stored.bundle, upstream);
  if (!blockers.length) return null;
  for (const b of blockers) Context.current().log.error(`restore blocked: ${b.detail}`);
  return {
    ...stored.base,
    step: 'check',
    restored_dashboard_id: beforeId,
    error: `restoring would take over objects that now belong to something else: ${blockers.map((b) => b.detail).join('; ')}`,
    next_actions: blockers.map((b) => b.next_action),
  };
}

/** The item when a role the backup's row-level-security rules name is missing (nothing is imported then), else null. */
async function rolesMissing(index: TargetIndex, stored: StoredBackup, beforeId: number | null): Promise<RestoreItem | null> {
  const missing = await missingRoles(index, stored.rules);
  if (!missing.length) return null;
  const names = missing.map((n) => `'${n}'`).join(', ');
  Context.current().log.error(`restore blocked: the environment has no role ${names}, which the backed-up row-level-security rules name`);
  return {
    ...stored.base,
    step: 'check',
    code: 'rls_role_missing',
    restored_dashboard_id: beforeId,
    error: `the environment has no role ${names}, which the backup's row-level-security rules name; nothing was imported`,
    next_actions: [
      {
        action: 'create_role',
        description: `Create role ${names} in Superset (Settings → List Roles), then restore again`,
        request: { method: 'POST', path: `/api/dashboards/backups/${stored.backup.id}/restore`, body: {} },
      },
    ],
  };
}

/** The item when a dashboard role the backup's companions name is missing (nothing is imported then), else null. */
async function companionRolesMissing(
  client: SupersetClient,
  envId: string,
  stored: StoredBackup,
  beforeId: number | null,
): Promise<RestoreItem | null> {
  const { log } = Context.current();
  const check = await checkKeptCompanions(client, envId, stored.companions!, stored.bundle, stored.backup.dashboard_title, log);
  if (!check.missingRoles.length) return null;
  const names = check.missingRoles.map((n) => `'${n}'`).join(', ');
  log.error(`restore blocked: the environment has no role ${names}, which the backed-up dashboard's roles name`);
  return {
    ...stored.base,
    step: 'check',
    code: 'companion_role_missing',
    restored_dashboard_id: beforeId,
    companions: check.reports,
    error: `the environment has no role ${names}, which the backed-up dashboard grants access to; nothing was imported`,
    next_actions: [
      {
        action: 'create_role',
        description: `Create role ${names} in Superset (Settings → List Roles), then restore again`,
        request: { method: 'POST', path: `/api/dashboards/backups/${stored.backup.id}/restore`, body: {} },
      },
    ],
  };
}

/** Puts the backup's row-level-security rules back after the import; a failure keeps the restored dashboard and names the rules. */
async function putBackRules(at: {
  upstream: Awaited<ReturnType<typeof upstreamFor>>;
  rlsIndex: TargetIndex;
  stored: StoredBackup;
  restored: RestoreItem;
  envId: string;
  dashboardId: number;
}): Promise<RestoreItem> {
  const { log } = Context.current();
  try {
    await at.rlsIndex.refresh(); // datasets the import re-created
    const writes = await writeRules({ upstream: at.upstream, index: at.rlsIndex, rules: at.stored.rules, scope: at.stored.scope });
    log.info(`row-level security put back: ${writes.map((w) => `${w.action} '${w.rule}'`).join(', ')}`);
    // A same-named rule that differs is left as it is (it may widen access): named with its next action.
    const review = writes.flatMap((w) => (w.next_action ? [w.next_action] : []));
    const next_actions = uniqueActions([...at.restored.next_actions, ...review]);
    return { ...at.restored, status: 'restored', outcome: 'succeeded', rls: { rules: at.stored.rules.length, writes }, next_actions };
  } catch (err) {
    const failure = itemFailure(err, {
      step: 'rls',
      item: `the row-level-security rules of '${at.stored.backup.dashboard_title}'`,
      envId: at.envId,
    });
    const error = `restored as dashboard ${at.dashboardId}, but its row-level-security rules were not put back: ${failure.error}`;
    log.error(`restore of backup ${at.stored.backup.id}: ${error}`);
    return { ...at.restored, ...failure, error };
  }
}
