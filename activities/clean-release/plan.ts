import type { ArtifactRow, CandidateRow, ManifestBody } from '../../db/clean-release/store.ts';
import type { PairSettings } from '../../contracts/env-rules.ts';
import { frozenFor, releaseSourceEnv } from '../../db/clean-release/written.ts';
import { readPairSettings } from '../../db/environments/pair-settings.ts';
import { exportFromFiles } from '../../lib/git/dashboard-files.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import {
  bundleSource,
  type MigrationUpstream,
  prepareDashboard,
  type TargetIndex,
  type UpstreamDatabase,
} from '../../domain/migration/index.ts';

/**
 * Source database → target database id: the candidate's mapping, else the same UUID in the
 * target, else the mapping saved from the environment the artifact came from (by UUID, then by
 * name as that mapping recorded it; as frozen in the manifest). Never by name alone in the target.
 */
async function mappingsFor(
  candidate: CandidateRow,
  settings: PairSettings,
  databases: UpstreamDatabase[],
  target: MigrationUpstream,
): Promise<Map<number, number>> {
  const targetDbs = await target.listDatabases();
  const saved = settings.db_mappings;
  const m = new Map<number, number>();
  for (const d of databases) {
    const sent = candidate.db_mappings.find(
      (x) => (x.database_uuid && x.database_uuid === d.uuid) || (x.database_name && x.database_name === d.database_name),
    );
    const id =
      sent?.target_database_id ??
      targetDbs.find((t) => t.uuid === d.uuid)?.id ??
      (saved.find((r) => r.source_database_uuid === d.uuid) ?? saved.find((r) => r.source_database_name === d.database_name))
        ?.target_database_id;
    if (id !== undefined) m.set(d.id, Number(id));
  }
  return m;
}

/**
 * The rules and saved mappings a check plans an artifact with: those frozen in the manifest, or
 * for a manifest built before they were frozen, the stored ones (a check writes nothing; a publish
 * of such a manifest is refused as stale, ./publish.ts).
 */
export async function releaseSettings(
  deps: Pick<ActivityDeps, 'stores'>,
  candidate: CandidateRow,
  a: ArtifactRow,
  body: ManifestBody,
): Promise<PairSettings> {
  return frozenFor(body, candidate, a) ?? readPairSettings(deps.stores, releaseSourceEnv(candidate, a), candidate.target_env_id);
}

/** The artifact's databases as its bundle source numbers them, and the target database each maps to (a publish's companions name them so). */
export async function artifactDatabases(
  deps: ActivityDeps,
  candidate: CandidateRow,
  a: ArtifactRow,
  settings: PairSettings,
  target: MigrationUpstream,
) {
  const source = bundleSource(exportFromFiles(new Map(Object.entries(a.files))), maxBundleBytes(deps));
  return { databases: source.databases, mappings: await mappingsFor(candidate, settings, source.databases, target) };
}

/** An artifact planned into the candidate's target through the migration path, under `settings` (the dry run and the publish). */
export async function planArtifact(
  deps: ActivityDeps,
  candidate: CandidateRow,
  a: ArtifactRow,
  settings: PairSettings,
  position: number,
  target: MigrationUpstream,
  index: TargetIndex,
) {
  const zip = exportFromFiles(new Map(Object.entries(a.files)));
  const source = bundleSource(zip, maxBundleBytes(deps));
  const mappings = await mappingsFor(candidate, settings, source.databases, target);
  return prepareDashboard({
    source,
    target,
    index,
    sourceEnvId: `release:${candidate.id}`,
    targetEnvId: candidate.target_env_id,
    dashboardId: position,
    overwrite: true,
    mappings,
    envRules: settings.rules,
    progress: { step: 'plan' },
    maxBundleBytes: maxBundleBytes(deps),
  });
}
