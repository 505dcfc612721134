import { Context } from '@temporalio/activity';
import { activityPort } from '../activity-port.ts';
import type { ReleaseItem } from '../../contracts/clean-release.ts';
import type { ArtifactRow, CandidateRow } from '../../db/clean-release/store.ts';
import { artifactDigest, portableDifferences, portableDigest } from '../../lib/clean-release/digest.ts';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { backupDashboard, type BackupDeps } from '../backups/index.ts';
import { itemFailure } from '../../domain/failures/index.ts';
import { type CompanionSubject, importPrepared, type MigrationUpstream, TargetIndex, upstreamFor } from '../../domain/migration/index.ts';
import { currentTaskId } from '../task-context.ts';
import { COMPANION_KINDS, type CompanionRequest } from '../../contracts/companions.ts';
import { checkDeployCompanions } from '../git/deploy-companions.ts';
import { artifactDatabases, planArtifact } from './plan.ts';
import type { PairSettings } from '../../contracts/env-rules.ts';
import { filesUnderRules, frozenFor, releaseSourceEnv } from '../../db/clean-release/written.ts';
import { settingsToApply } from '../../db/environments/pair-settings.ts';

const ALL_COPY = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'copy'])) as CompanionRequest;

type PublishInput = { candidateId: string; dashboardUuid: string; position: number };

/**
 * Publishes one artifact into the target: its digest is held to the manifest, what it replaces
 * is backed up first, then the exact files are imported through the migration path, and the
 * target's re-export is digested again (portable digest) to prove it holds what was approved.
 */
export async function publishReleaseArtifact(deps: BackupDeps, input: PublishInput): Promise<ReleaseItem> {
  const store = deps.stores.cleanRelease;
  const candidate = await store.getCandidate(input.candidateId);
  const artifact = await store.artifact(candidate.id, input.dashboardUuid);
  const manifest = candidate.manifest_id ? await store.findManifest(candidate.manifest_id) : undefined;
  const entry = manifest?.body.artifacts.find((a) => a.dashboard_uuid === input.dashboardUuid);
  const item: ReleaseItem = {
    kind: 'dashboard',
    id: input.dashboardUuid,
    title: artifact?.title ?? entry?.title ?? null,
    status: 'failed',
    outcome: 'failed',
    next_actions: [],
    sha256: entry?.sha256 ?? null,
    target_dashboard_id: null,
    backup_id: null,
  };
  if (!artifact || !entry) return { ...item, step: 'read', error: 'the artifact or its manifest entry is gone' };
  if (artifactDigest(artifact.files) !== entry.sha256)
    return {
      ...item,
      step: 'verify_digest',
      error: `the artifact no longer has the manifest's digest ${entry.sha256}: nothing was imported`,
    };
  // What was approved is what is applied: the rules and mappings frozen in the manifest, or nothing.
  const pair = { sourceEnvId: releaseSourceEnv(candidate, artifact), targetEnvId: candidate.target_env_id };
  const applied = await settingsToApply(deps.stores, pair, frozenFor(manifest!.body, candidate, artifact), true);
  if ('stale' in applied) return staleItem(candidate, item, applied.stale);
  const at = { step: 'backup' };
  try {
    return await publishInto(deps, input, candidate, { artifact, settings: applied.settings }, item, at);
  } catch (err) {
    const f = itemFailure(err, { step: at.step, item: `dashboard ${input.dashboardUuid}`, envId: candidate.target_env_id });
    Context.current().log.error(`publishing ${input.dashboardUuid} failed at ${at.step}: ${f.error}`);
    return { ...item, ...f };
  }
}

/** The manifest's frozen rules or mappings no longer match the stored ones: nothing imported, the way back to an approval offered. */
function staleItem(candidate: CandidateRow, item: ReleaseItem, why: string): ReleaseItem {
  Context.current().log.warn(`publish refused as stale: ${why}`);
  return {
    ...item,
    step: 'rules',
    error: `the release is stale: ${why}; nothing was imported`,
    next_actions: [
      {
        action: 'rebuild_manifest',
        description:
          'Build the manifest again (it freezes the rules and mappings as they are now), then prepare, check and have it approved again before publishing',
        request: { method: 'POST', path: `/api/v2/clean-release/candidates/${candidate.id}/manifest`, body: {} },
      },
    ],
  };
}

/** Backup of what it replaces, plan, import, record, verify; `at` follows the step for the caller's failure. */
async function publishInto(
  deps: BackupDeps,
  input: PublishInput,
  candidate: CandidateRow,
  frozen: { artifact: ArtifactRow; settings: PairSettings },
  item: ReleaseItem,
  at: { step: string },
): Promise<ReleaseItem> {
  const { artifact, settings } = frozen;
  const target = await upstreamFor(deps, candidate.target_env_id);
  const existing = await target.findDashboard(input.dashboardUuid);
  const backup = existing ? await backupReplaced(deps, candidate, existing.id, item) : { backupId: null };
  if ('failed' in backup) return backup.failed;
  const { backupId } = backup;
  at.step = 'plan';
  const index = await TargetIndex.build(target);
  const prepared = await planArtifact(deps, candidate, artifact, settings, input.position, target, index);
  if (prepared.blocked) return { ...item, step: 'plan', error: prepared.blocked.error, next_actions: prepared.blocked.next_actions };
  at.step = 'companions';
  const companions = await artifactCompanions(deps, candidate, frozen, target, prepared);
  at.step = 'import';
  const r = await importPrepared({
    intents: deps.stores.migrationItems,
    taskId: currentTaskId(),
    sourceDashboardId: input.position,
    target,
    prepared,
    learned: [],
    overwrite: true,
    activity: activityPort(),
  });
  await deps.stores.cleanRelease.recordPublication({
    candidate_id: candidate.id,
    dashboard_uuid: input.dashboardUuid,
    env_id: candidate.target_env_id,
    target_dashboard_id: r.targetDashboardId,
    backup_id: backupId,
    existed: Boolean(existing),
  });
  at.step = 'verify';
  // What the frozen rules changed is what the target should hold: the re-export is held to the artifact under them.
  const expected = prepared.envRules.some((e) => e.matched) ? filesUnderRules(artifact, settings.rules) : artifact.files;
  const rules = prepared.envRules.length ? { env_rules: prepared.envRules } : {};
  at.step = 'companions';
  const refused = await companions.apply(r.targetDashboardId);
  const listed = { companions: companions.reports, ...(companions.note ? { companions_note: companions.note } : {}) };
  const done = await verified(target, candidate, expected, {
    ...item,
    ...rules,
    ...listed,
    target_dashboard_id: r.targetDashboardId,
    backup_id: backupId,
  });
  if (!refused.length) return { ...done, next_actions: [...done.next_actions, ...companions.next_actions] };
  const error = `published, but some of its companions were not written: ${refused.join('; ')}`;
  Context.current().log.error(error);
  return { ...done, status: 'failed', outcome: 'failed', step: 'companions', error, next_actions: companions.next_actions };
}

/**
 * The artifact's companion files, compared with the target before the import. Every kind is
 * copied: the manifest's digest covers those files, so what was approved is what is applied
 * (roles included); reports start paused as in a migration.
 */
async function artifactCompanions(
  deps: BackupDeps,
  candidate: CandidateRow,
  { artifact, settings }: { artifact: ArtifactRow; settings: PairSettings },
  target: MigrationUpstream,
  prepared: CompanionSubject,
) {
  const { databases, mappings } = await artifactDatabases(deps, candidate, artifact, settings, target);
  return checkDeployCompanions({
    deps,
    files: new Map(Object.entries(artifact.files)),
    databases,
    sourceLabel: `release:${candidate.id}`,
    targetEnvId: candidate.target_env_id,
    companions: ALL_COPY,
    mappings,
    envRules: settings.rules,
    subject: prepared,
    log: Context.current().log,
  });
}

/** Backs up the target's dashboard the publish would replace: its backup id, or the failed item (nothing imported). */
async function backupReplaced(
  deps: BackupDeps,
  candidate: CandidateRow,
  dashboardId: number,
  item: ReleaseItem,
): Promise<{ backupId: string } | { failed: ReleaseItem }> {
  const b = await backupDashboard(deps, { envId: candidate.target_env_id, dashboardId });
  if (b.item.outcome !== 'succeeded' || !b.item.backup_id)
    return {
      failed: {
        ...item,
        step: 'backup',
        error: `backing up what the publish would replace failed: ${b.item.error ?? 'no backup'}; nothing was imported`,
        next_actions: b.item.next_actions,
      },
    };
  Context.current().log.info(
    `backed up dashboard ${dashboardId} of ${candidate.target_env_id} as ${b.item.backup_id} before publishing over it`,
  );
  return { backupId: b.item.backup_id };
}

/** The published item, with whether the target's re-export has the artifact's portable digest (and what differs if not). */
async function verified(
  target: MigrationUpstream,
  candidate: CandidateRow,
  expected: ArtifactRow['files'] | Map<string, string>,
  item: ReleaseItem,
): Promise<ReleaseItem> {
  const targetDashboardId = item.target_dashboard_id!;
  const back = filesFromExport(await target.exportDashboards([targetDashboardId]));
  const same = portableDigest(back.files) === portableDigest(expected);
  const differences = same ? [] : portableDifferences(expected, back.files);
  Context.current().log.info(
    `published '${item.title}' as dashboard ${targetDashboardId} of ${candidate.target_env_id}; ${
      same
        ? "the target's re-export has the manifest's content digest"
        : `the target's re-export differs: ${differences.map((d) => `${d.path} (${d.keys.join(', ')})`).join('; ')}`
    }`,
  );
  return {
    ...item,
    status: 'published',
    outcome: 'succeeded',
    target_dashboard_id: targetDashboardId,
    backup_id: item.backup_id,
    verified: same,
    ...(differences.length ? { differences } : {}),
  };
}
