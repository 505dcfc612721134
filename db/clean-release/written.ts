/**
 * A release artifact as it will be written into the target: its files under the rules frozen in
 * the manifest (ManifestBody.pairs), and the hosts those files name. The trusted-hosts checks and
 * the publish's verification read these, never the raw artifact alone.
 */
import type { EnvRule, PairSettings } from '../../contracts/env-rules.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { applyEnvRules } from '../../lib/bundles/env-rules.ts';
import { hostsInFiles } from '../../lib/clean-release/hosts.ts';
import { exportFromFiles, filesFromExport } from '../../lib/git/dashboard-files.ts';
import type { ArtifactRow, CandidateRow, ManifestBody } from './store.ts';

/** The environment an artifact was taken from, when it is another than the target (its mappings and rules apply). */
export function releaseSourceEnv(candidate: Pick<CandidateRow, 'target_env_id'>, a: Pick<ArtifactRow, 'source'>): string | null {
  return a.source.env_id && a.source.env_id !== candidate.target_env_id ? a.source.env_id : null;
}

/** The frozen settings of the artifact's pair in the manifest; undefined for a manifest built before they were frozen. */
export function frozenFor(
  body: Pick<ManifestBody, 'pairs'>,
  candidate: Pick<CandidateRow, 'target_env_id'>,
  a: Pick<ArtifactRow, 'source'>,
): PairSettings | undefined {
  const from = releaseSourceEnv(candidate, a);
  return body.pairs?.find((p) => p.source_env_id === from && p.target_env_id === candidate.target_env_id);
}

/** The artifact's files as the target should hold them: the rules applied (the artifact itself and its digest stay as approved). */
export function filesUnderRules(a: Pick<ArtifactRow, 'files'>, rules: readonly EnvRule[]): Map<string, string> {
  const bundle = Bundle.fromZip(exportFromFiles(new Map(Object.entries(a.files))));
  applyEnvRules(bundle, rules);
  return filesFromExport(bundle.toZip()).files;
}

/** The artifact's hosts as it will be written: where it came from, and every host its files name under the rules. */
export function hostsAsWritten(a: ArtifactRow, rules: readonly EnvRule[]): ArtifactRow['hosts'] {
  if (!rules.length) return a.hosts;
  return [
    ...a.hosts.filter((h) => h.role === 'source'),
    ...hostsInFiles(filesUnderRules(a, rules)).map((f) => ({ host: f.host, role: f.role, where: f.where })),
  ];
}

/** The artifacts with their hosts as written under the manifest's frozen rules (none frozen: as they are). */
export function artifactsAsWritten(
  artifacts: ArtifactRow[],
  body: Pick<ManifestBody, 'pairs'>,
  candidate: Pick<CandidateRow, 'target_env_id'>,
): ArtifactRow[] {
  return artifacts.map((a) => ({ ...a, hosts: hostsAsWritten(a, frozenFor(body, candidate, a)?.rules ?? []) }));
}
