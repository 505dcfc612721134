/**
 * The checks of a release candidate, run by the `release_check` task: every digest against the
 * manifest, every host against the registry as it is now, and the policy's rules. Each check is
 * one outcome in the report; an enforced rule that fails fails the report, a warned one is noted.
 */
import type { CheckOutcome, PolicyRule, Violation } from '../../contracts/clean-release.ts';
import type { ArtifactRow, ManifestRow, Registry } from './store.ts';
import { artifactDigest } from '../../lib/clean-release/digest.ts';
import { isTrusted } from '../../lib/clean-release/hosts.ts';

export const artifactName = (a: Pick<ArtifactRow, 'dashboard_uuid' | 'title'>) => `${a.title ?? 'dashboard'} (${a.dashboard_uuid})`;

/** Recomputes every artifact's digest from its stored files and holds it to the manifest. */
export function digestCheck(manifest: ManifestRow, artifacts: ArtifactRow[]): CheckOutcome {
  const violations: Violation[] = [];
  const byUuid = new Map(artifacts.map((a) => [a.dashboard_uuid, a]));
  for (const m of manifest.body.artifacts) {
    const a = byUuid.get(m.dashboard_uuid);
    const name = `${m.title ?? 'dashboard'} (${m.dashboard_uuid})`;
    if (!a) {
      violations.push({
        rule: 'digests',
        mode: 'enforce',
        blocking: true,
        artifact: name,
        message: `${name} is in the manifest but its artifact is gone`,
      });
      continue;
    }
    const actual = artifactDigest(a.files);
    if (actual !== m.sha256)
      violations.push({
        rule: 'digests',
        mode: 'enforce',
        blocking: true,
        artifact: name,
        message: `${name}: the artifact's content digests to ${actual}, the manifest says ${m.sha256}: it changed after the manifest was built`,
      });
  }
  for (const a of artifacts)
    if (!manifest.body.artifacts.some((m) => m.dashboard_uuid === a.dashboard_uuid))
      violations.push({
        rule: 'digests',
        mode: 'enforce',
        blocking: true,
        artifact: artifactName(a),
        message: `${artifactName(a)} is not in the manifest`,
      });
  return {
    check: 'digests',
    status: violations.length ? 'failed' : 'passed',
    detail: violations.length
      ? `${violations.length} artifact(s) do not match manifest ${manifest.id}`
      : `${manifest.body.artifacts.length} artifact(s) match manifest ${manifest.id} (sha256 ${manifest.digest})`,
    violations,
  };
}

const ruleOf = (rules: readonly PolicyRule[], name: PolicyRule['rule']) => rules.find((r) => r.rule === name);

/**
 * One violation per untrusted host, naming every artifact and place it appears in. Source and
 * content hosts fall under `trusted_sources`, database connection hosts under
 * `trusted_database_hosts`; a rule the policy leaves out is enforced (the registry is the gate).
 */
export function hostViolations(artifacts: ArtifactRow[], registry: Registry, rules: readonly PolicyRule[]): Violation[] {
  const byHost = new Map<string, { role: 'database' | 'other'; places: Array<{ artifact: string; where: string }> }>();
  for (const a of artifacts) {
    for (const h of a.hosts) {
      if (isTrusted(h.host, registry.hosts)) continue;
      const role = h.role === 'database' ? 'database' : 'other';
      const key = `${role}\0${h.host}`;
      const entry = byHost.get(key) ?? { role, places: [] };
      entry.places.push({ artifact: artifactName(a), where: h.where });
      byHost.set(key, entry);
    }
  }
  const out: Violation[] = [];
  for (const [key, { role, places }] of byHost) {
    const host = key.split('\0')[1]!;
    const rule = role === 'database' ? 'trusted_database_hosts' : 'trusted_sources';
    const mode = ruleOf(rules, rule)?.mode ?? 'enforce';
    const first = places[0]!;
    out.push({
      rule,
      mode,
      blocking: mode === 'enforce',
      host,
      artifact: first.artifact,
      where: places.map((p) => `${p.artifact}: ${p.where}`).join('; '),
      message: `${role === 'database' ? 'database host' : 'host'} ${host} is not in the trusted registry (appears in ${places
        .map((p) => `${p.artifact} at ${p.where}`)
        .join('; ')})`,
    });
  }
  return out;
}

/**
 * One blocking violation per artifact built elsewhere whose claimed source does not vouch for it:
 * a remote outside the trusted registry, a commit that cannot be read there, or one that holds
 * other content. Not a policy rule that could be warned: nothing enters a release unvouched.
 */
export function provenanceViolations(artifacts: ArtifactRow[]): Violation[] {
  return artifacts.flatMap((a) => {
    const s = a.source;
    if (s.kind !== 'built' || s.verified) return [];
    const name = artifactName(a);
    return [
      {
        rule: 'built_provenance',
        mode: 'enforce' as const,
        blocking: true,
        artifact: name,
        ...(s.host ? { host: s.host } : {}),
        where: `claimed source ${s.remote} at ${s.commit}`,
        message: `${name} was built elsewhere and its claimed source does not vouch for it: ${s.reason ?? 'unverified'}`,
      },
    ];
  });
}

export function outcomeOf(check: string, violations: Violation[], passedDetail: string): CheckOutcome {
  const blocking = violations.filter((v) => v.blocking);
  return {
    check,
    status: blocking.length ? 'failed' : violations.length ? 'warned' : 'passed',
    detail: violations.length ? violations.map((v) => v.message).join(' | ') : passedDetail,
    violations,
  };
}
