import type { ArtifactRow, CandidateRow } from '../../db/clean-release/store.ts';
import type { EnvRule } from '../../contracts/env-rules.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { applyEnvRules } from '../../lib/bundles/env-rules.ts';
import { exportFromFiles, filesFromExport } from '../../lib/git/dashboard-files.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { bundleSource } from '../dashboard-migration/bundle-source.ts';
import { prepareDashboard } from '../dashboard-migration/plan.ts';
import type { TargetIndex } from '../dashboard-migration/target-index.ts';
import type { MigrationUpstream, UpstreamDatabase } from '../dashboard-migration/upstream.ts';

/**
 * Source database → target database id: the candidate's mapping, else the same UUID in the
 * target, else the mapping saved from the environment the artifact came from (by UUID, then by
 * name as that mapping recorded it). Never by name alone in the target.
 */
async function mappingsFor(
  deps: Pick<ActivityDeps, 'stores'>,
  candidate: CandidateRow,
  a: ArtifactRow,
  databases: UpstreamDatabase[],
  target: MigrationUpstream,
): Promise<Map<number, number>> {
  const targetDbs = await target.listDatabases();
  const fromEnv = sourceEnvOf(candidate, a);
  const saved = fromEnv ? await deps.stores.databaseMappings.list(fromEnv, candidate.target_env_id) : [];
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

/** The environment an artifact was taken from, when it is another than the target (its mappings and rules apply). */
function sourceEnvOf(candidate: CandidateRow, a: ArtifactRow): string | null {
  return a.source.env_id && a.source.env_id !== candidate.target_env_id ? a.source.env_id : null;
}

/** The per-environment rules from the artifact's environment to the candidate's target. */
export async function releaseRules(deps: Pick<ActivityDeps, 'stores'>, candidate: CandidateRow, a: ArtifactRow): Promise<EnvRule[]> {
  const fromEnv = sourceEnvOf(candidate, a);
  return fromEnv ? deps.stores.environmentRules.rulesFor(fromEnv, candidate.target_env_id) : [];
}

/**
 * The artifact's files as the target should hold them: the per-environment rules applied (what
 * the publish's re-export is held to; the artifact itself and its digest stay as approved).
 */
export function filesUnderRules(a: ArtifactRow, rules: readonly EnvRule[]): Map<string, string> {
  const bundle = Bundle.fromZip(exportFromFiles(new Map(Object.entries(a.files))));
  applyEnvRules(bundle, rules);
  return filesFromExport(bundle.toZip()).files;
}

/** The artifact's databases as its bundle source numbers them, and the target database each maps to (a publish's companions name them so). */
export async function artifactDatabases(deps: ActivityDeps, candidate: CandidateRow, a: ArtifactRow, target: MigrationUpstream) {
  const source = bundleSource(exportFromFiles(new Map(Object.entries(a.files))), maxBundleBytes(deps));
  return { databases: source.databases, mappings: await mappingsFor(deps, candidate, a, source.databases, target) };
}

/** An artifact planned into the candidate's target through the migration path (the dry run and the publish). */
export async function planArtifact(deps: ActivityDeps, candidate: CandidateRow, a: ArtifactRow, position: number, target: MigrationUpstream, index: TargetIndex) {
  const zip = exportFromFiles(new Map(Object.entries(a.files)));
  const source = bundleSource(zip, maxBundleBytes(deps));
  const mappings = await mappingsFor(deps, candidate, a, source.databases, target);
  return prepareDashboard({
    source,
    target,
    index,
    sourceEnvId: `release:${candidate.id}`,
    targetEnvId: candidate.target_env_id,
    dashboardId: position,
    overwrite: true,
    mappings,
    envRules: await releaseRules(deps, candidate, a),
    progress: { step: 'plan' },
    maxBundleBytes: maxBundleBytes(deps),
  });
}
