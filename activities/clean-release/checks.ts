import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CheckOutcome, PolicyRule, ReleaseCheckInput, ReleaseCheckResult, Violation } from '../../contracts/clean-release.ts';
import { artifactName, digestCheck, hostViolations, outcomeOf, provenanceViolations } from '../../db/clean-release/checks.ts';
import type { ArtifactRow, CandidateRow, ManifestRow } from '../../db/clean-release/store.ts';
import { artifactsAsWritten } from '../../db/clean-release/written.ts';
import { fromYaml } from '../../lib/git/dashboard-files.ts';
import type { ActivityDeps } from '../deps.ts';
import { itemFailure } from '../../domain/failures/index.ts';
import { TargetIndex, upstreamFor } from '../../domain/migration/index.ts';
import { planArtifact, releaseSettings } from './plan.ts';

/** What one rule found: its violations (`v` adds one) and, when there are none, what passed. */
type RuleCheck = (v: (artifact: string, message: string) => void) => Promise<string>;

/** Runs a report's checks on the candidate's artifacts: digests, trusted hosts, then each rule of the policy. */
export async function runReleaseChecks(deps: ActivityDeps, input: ReleaseCheckInput): Promise<ReleaseCheckResult> {
  const { log } = Context.current();
  const store = deps.stores.cleanRelease;
  const report = await store.findReport(input.reportId);
  if (!report) throw ApplicationFailure.nonRetryable(`report ${input.reportId} does not exist`, 'NotFound');
  const candidate = await store.getCandidate(input.candidateId);
  const manifest = await store.findManifest(report.manifest_id);
  if (!manifest) throw ApplicationFailure.nonRetryable(`manifest ${report.manifest_id} does not exist`, 'NotFound');
  const artifacts = await store.artifacts(candidate.id);
  const [registry, policy] = await Promise.all([store.registry(), store.policy()]);
  const checks: CheckOutcome[] = [];

  checks.push(digestCheck(manifest, artifacts));
  log.info(`digests: ${checks[0]!.detail}`);

  // Hosts as the artifacts will be written: under the rules frozen in the manifest.
  const hosts = hostViolations(artifactsAsWritten(artifacts, manifest.body, candidate), registry, policy.rules);
  checks.push(
    outcomeOf(
      'trusted_hosts',
      hosts,
      `every host of ${artifacts.length} artifact(s) is in the trusted registry (${registry.hosts.length} entries)`,
    ),
  );
  const built = artifacts.filter((a) => a.source.kind === 'built').length;
  checks.push(
    outcomeOf(
      'built_provenance',
      provenanceViolations(artifacts),
      `${built} artifact(s) built elsewhere, each vouched for by its claimed source`,
    ),
  );

  for (const rule of policy.rules) {
    if (rule.rule === 'trusted_sources' || rule.rule === 'trusted_database_hosts') continue;
    checks.push(await ruleOutcome(deps, rule, candidate, manifest, artifacts));
  }
  const passed = checks.every((c) => c.status !== 'failed');
  await store.finishReport(report.id, passed, checks);
  log.info(`release check ${passed ? 'passed' : 'failed'}: ${checks.map((c) => `${c.check}=${c.status}`).join(', ')}`);
  return { candidate_id: candidate.id, report_id: report.id, passed, checks };
}

/** One policy rule over the artifacts; a rule that cannot be evaluated is a violation of it. */
async function ruleOutcome(
  deps: ActivityDeps,
  rule: PolicyRule,
  candidate: CandidateRow,
  manifest: ManifestRow,
  artifacts: ArtifactRow[],
): Promise<CheckOutcome> {
  const violations: Violation[] = [];
  const v = (artifact: string, message: string) =>
    violations.push({ rule: rule.rule, mode: rule.mode, blocking: rule.mode === 'enforce', artifact, message });
  const checks: Partial<Record<PolicyRule['rule'], RuleCheck>> = {
    verified_in_staging: (add) => inStaging(deps, rule, artifacts, add),
    accepted_llm_text: (add) => acceptedText(deps, artifacts, add),
    dry_run_migration: (add) => dryRun(deps, candidate, manifest, artifacts, add),
  };
  let passed = '';
  try {
    passed = (await checks[rule.rule]?.(v)) ?? '';
  } catch (err) {
    const f = itemFailure(err, { step: rule.rule, item: `rule ${rule.rule}`, envId: rule.env_id ?? candidate.target_env_id });
    v('(all)', `${rule.rule} could not be evaluated: ${f.error}`);
  }
  return outcomeOf(rule.rule, violations, passed);
}

/** verified_in_staging: every chart of the artifacts is already in the staging environment. */
async function inStaging(deps: ActivityDeps, rule: PolicyRule, artifacts: ArtifactRow[], v: Parameters<RuleCheck>[0]): Promise<string> {
  const staging = await upstreamFor(deps, rule.env_id!);
  const index = await TargetIndex.build(staging);
  let charts = 0;
  for (const a of artifacts)
    for (const path of Object.keys(a.files).filter((p) => p.startsWith('charts/'))) {
      charts++;
      const uuid = path.slice('charts/'.length, -'.yaml'.length);
      if (!index.chart(uuid)) v(artifactName(a), `chart ${uuid} of ${artifactName(a)} is not in the staging environment ${rule.env_id}`);
    }
  return `all ${charts} chart(s) are in the staging environment ${rule.env_id}`;
}

/** accepted_llm_text: no description of the artifacts' datasets is LLM text nobody accepted. */
async function acceptedText(deps: Pick<ActivityDeps, 'stores'>, artifacts: ArtifactRow[], v: Parameters<RuleCheck>[0]): Promise<string> {
  const texts = new Map<string, ArtifactRow>();
  for (const a of artifacts)
    for (const [path, text] of Object.entries(a.files))
      if (path.startsWith('datasets/')) for (const d of descriptionsOf(fromYaml(text))) texts.set(d, a);
  for (const s of await deps.stores.datasetSuggestions.unacceptedAmong([...texts.keys()]))
    v(
      artifactName(texts.get(s.value)!),
      `a description is LLM text no person accepted (suggestion ${s.status}): "${s.value.slice(0, 80)}"`,
    );
  return `none of ${texts.size} description(s) is unaccepted LLM text`;
}

/** dry_run_migration: every artifact plans cleanly into the candidate's target. */
async function dryRun(
  deps: ActivityDeps,
  candidate: CandidateRow,
  manifest: ManifestRow,
  artifacts: ArtifactRow[],
  v: Parameters<RuleCheck>[0],
): Promise<string> {
  const target = await upstreamFor(deps, candidate.target_env_id);
  const index = await TargetIndex.build(target);
  let i = 0;
  for (const a of artifacts) {
    const p = await planArtifact(deps, candidate, a, await releaseSettings(deps, candidate, a, manifest.body), ++i, target, index);
    if (p.blocked) v(artifactName(a), `a migration into ${candidate.target_env_id} would stop: ${p.blocked.error}`);
  }
  return `a dry-run migration of ${artifacts.length} dashboard(s) into ${candidate.target_env_id} plans cleanly`;
}

/** Descriptions in a dataset file: the dataset's, its columns' and its metrics'. */
function descriptionsOf(content: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (typeof content.description === 'string' && content.description) out.push(content.description);
  for (const key of ['columns', 'metrics'])
    for (const c of (Array.isArray(content[key]) ? content[key] : []) as Array<Record<string, unknown>>)
      if (typeof c?.description === 'string' && c.description) out.push(c.description);
  return out;
}
