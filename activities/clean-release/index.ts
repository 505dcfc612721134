import { ApplicationFailure, Context } from '@temporalio/activity';
import type {
  CandidateState,
  CheckOutcome,
  ReleaseCheckInput,
  ReleaseCheckResult,
  ReleaseDecision,
  ReleaseDecisionOutcome,
  ReleaseItem,
  ReleasePublishInput,
  Violation,
} from '../../contracts/clean-release.ts';
import { releaseWorkflowId } from '../../contracts/clean-release.ts';
import { approvalFor, TASK_KINDS } from '../../contracts/task-kinds.ts';
import { selfApprovalRefusal, type ArtifactRow, type CandidateRow } from '../../db/clean-release/store.ts';
import { AppError } from '../../lib/errors.ts';
import { artifactDigest, portableDifferences, portableDigest } from '../../lib/clean-release/digest.ts';
import { exportFromFiles, filesFromExport, fromYaml } from '../../lib/git/dashboard-files.ts';
import { createBackupActivities } from '../backups/index.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { itemFailure } from '../item-failure.ts';
import { importPrepared } from '../migration/apply.ts';
import { bundleSource } from '../migration/bundle-source.ts';
import { prepareDashboard } from '../migration/plan.ts';
import { upstreamFor } from '../migration/superset-upstream.ts';
import { TargetIndex } from '../migration/target-index.ts';
import type { MigrationUpstream, UpstreamDatabase } from '../migration/upstream.ts';
import { currentTaskId } from '../task-context.ts';
import { artifactName, digestCheck, hostViolations, outcomeOf } from '../../db/clean-release/checks.ts';

/** Which states each decision may leave from, the state it sets, and its name in a refusal. */
const TRANSITIONS: Record<ReleaseDecision['action'], [CandidateState[], CandidateState, string]> = {
  approve: [['checked'], 'approved', 'approval'],
  reject: [['draft', 'prepared', 'blocked', 'checked', 'check_failed', 'approved'], 'rejected', 'rejection'],
  publish: [['approved', 'publish_failed'], 'publishing', 'publishing'],
  revoke: [['published', 'publish_failed'], 'revoking', 'revoking'],
};

/** A refusal the release workflow hands back to the deciding person as the update's failure. */
function refuse(err: AppError): never {
  throw ApplicationFailure.nonRetryable(err.message, err.code, { status: err.status, ...(err.extra ?? {}) });
}

export function createCleanReleaseActivities(deps: ActivityDeps) {
  const { cleanRelease: store, environments, datasetSuggestions: suggestions } = deps.stores;
  const backups = createBackupActivities(deps);

  /**
   * Source database → target database id: the candidate's mapping, else the same UUID in the
   * target, else the mapping saved from the environment the artifact came from (by UUID, then by
   * name as that mapping recorded it). Never by name alone in the target.
   */
  async function mappingsFor(
    candidate: CandidateRow,
    a: ArtifactRow,
    databases: UpstreamDatabase[],
    target: MigrationUpstream,
  ): Promise<Map<number, number>> {
    const targetDbs = await target.listDatabases();
    const fromEnv = a.source.env_id && a.source.env_id !== candidate.target_env_id ? a.source.env_id : null;
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

  async function plan(candidate: CandidateRow, a: ArtifactRow, position: number, target: MigrationUpstream, index: TargetIndex) {
    const zip = exportFromFiles(new Map(Object.entries(a.files)));
    const source = bundleSource(zip, maxBundleBytes(deps));
    const mappings = await mappingsFor(candidate, a, source.databases, target);
    return prepareDashboard({
      source,
      target,
      index,
      sourceEnvId: `release:${candidate.id}`,
      targetEnvId: candidate.target_env_id,
      dashboardId: position,
      overwrite: true,
      mappings,
      progress: { step: 'plan' },
      maxBundleBytes: maxBundleBytes(deps),
    });
  }

  return {
    async runReleaseChecks(input: ReleaseCheckInput): Promise<ReleaseCheckResult> {
      const { log } = Context.current();
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

      const hosts = hostViolations(artifacts, registry, policy.rules);
      checks.push(
        outcomeOf(
          'trusted_hosts',
          hosts,
          `every host of ${artifacts.length} artifact(s) is in the trusted registry (${registry.hosts.length} entries)`,
        ),
      );

      for (const rule of policy.rules) {
        if (rule.rule === 'trusted_sources' || rule.rule === 'trusted_database_hosts') continue;
        const violations: Violation[] = [];
        const v = (artifact: string, message: string) =>
          violations.push({ rule: rule.rule, mode: rule.mode, blocking: rule.mode === 'enforce', artifact, message });
        let passed = '';
        try {
          if (rule.rule === 'verified_in_staging') {
            const staging = await upstreamFor(deps, rule.env_id!);
            const index = await TargetIndex.build(staging);
            let charts = 0;
            for (const a of artifacts)
              for (const path of Object.keys(a.files).filter((p) => p.startsWith('charts/'))) {
                charts++;
                const uuid = path.slice('charts/'.length, -'.yaml'.length);
                if (!index.chart(uuid))
                  v(artifactName(a), `chart ${uuid} of ${artifactName(a)} is not in the staging environment ${rule.env_id}`);
              }
            passed = `all ${charts} chart(s) are in the staging environment ${rule.env_id}`;
          } else if (rule.rule === 'accepted_llm_text') {
            const texts = new Map<string, ArtifactRow>();
            for (const a of artifacts)
              for (const [path, text] of Object.entries(a.files))
                if (path.startsWith('datasets/')) for (const d of descriptionsOf(fromYaml(text))) texts.set(d, a);
            for (const s of await suggestions.unacceptedAmong([...texts.keys()]))
              v(
                artifactName(texts.get(s.value)!),
                `a description is LLM text no person accepted (suggestion ${s.status}): "${s.value.slice(0, 80)}"`,
              );
            passed = `none of ${texts.size} description(s) is unaccepted LLM text`;
          } else if (rule.rule === 'dry_run_migration') {
            const target = await upstreamFor(deps, candidate.target_env_id);
            const index = await TargetIndex.build(target);
            let i = 0;
            for (const a of artifacts) {
              const p = await plan(candidate, a, ++i, target, index);
              if (p.blocked) v(artifactName(a), `a migration into ${candidate.target_env_id} would stop: ${p.blocked.error}`);
            }
            passed = `a dry-run migration of ${artifacts.length} dashboard(s) into ${candidate.target_env_id} plans cleanly`;
          }
        } catch (err) {
          const f = itemFailure(err, { step: rule.rule, item: `rule ${rule.rule}`, envId: rule.env_id ?? candidate.target_env_id });
          v('(all)', `${rule.rule} could not be evaluated: ${f.error}`);
        }
        checks.push(outcomeOf(rule.rule, violations, passed));
      }
      const passed = checks.every((c) => c.status !== 'failed');
      await store.finishReport(report.id, passed, checks);
      log.info(`release check ${passed ? 'passed' : 'failed'}: ${checks.map((c) => `${c.check}=${c.status}`).join(', ')}`);
      return { candidate_id: candidate.id, report_id: report.id, passed, checks };
    },

    /**
     * One decision on a candidate, applied in the database under a conditional state change and
     * recorded; a publish or revoke also registers its task (run by the release workflow as a child).
     * Idempotent per decision id: a retried activity returns what the first attempt decided.
     */
    async applyReleaseDecision(
      input: ReleaseDecision & { candidateId: string; decisionId: string },
    ): Promise<ReleaseDecisionOutcome & { publish?: ReleasePublishInput }> {
      const candidate = await store.getCandidate(input.candidateId).catch((e: AppError) => refuse(e));
      const spawns = input.action === 'publish' || input.action === 'revoke';
      const taskId = spawns ? `release_publish-${input.decisionId}` : null;
      let decided = (await store.decisions(candidate.id)).find((d) => d.id === input.decisionId);
      if (!decided) {
        try {
          if (input.action === 'approve') {
            const refusal = selfApprovalRefusal(candidate, input.userId);
            if (refusal) throw new AppError(403, 'self_approval', 'Forbidden', refusal);
            const report = candidate.report_id ? await store.findReport(candidate.report_id) : undefined;
            if (candidate.state === 'checked' && (!report || report.status !== 'passed' || report.manifest_id !== candidate.manifest_id))
              throw new AppError(
                409,
                'no_passed_report',
                'Conflict',
                'approval needs a passed check report of the current manifest; run the checks',
              );
          }
          const [from, to, operation] = TRANSITIONS[input.action];
          decided = await store.decide(candidate.id, from, to, operation, {
            id: input.decisionId,
            action: input.action,
            by_id: input.userId,
            by_username: input.username,
            comment: input.comment ?? null,
            task_id: taskId,
          });
        } catch (err) {
          if (err instanceof AppError) refuse(err);
          throw err;
        }
      }
      let publish: ReleasePublishInput | undefined;
      if (spawns) {
        // Registered after the decision (a refused one leaves no task behind); idempotent by the decision id.
        const mode = input.action === 'publish' ? 'publish' : 'revoke';
        const manifest = candidate.manifest_id ? await store.findManifest(candidate.manifest_id) : undefined;
        const uuids =
          mode === 'publish'
            ? (manifest?.body.artifacts.map((a) => a.dashboard_uuid) ?? [])
            : (await store.publications(candidate.id)).map((p) => p.dashboard_uuid);
        publish = { candidateId: candidate.id, mode, targetEnvId: candidate.target_env_id, dashboardUuids: uuids };
        const kind = TASK_KINDS.release_publish;
        // Into a protected environment the publish (or revoke) waits for another person, as every writing task does.
        const envs = await environments.labelsById([publish.targetEnvId]);
        const approval = approvalFor(kind, publish, (id) => envs.get(id)?.protected === true, input.userId, deps.config.APPROVAL_TIMEOUT_SECONDS);
        if (approval) publish = { ...publish, approval };
        const { summary, details } = kind.describe(publish, (id) => envs.get(id)?.name ?? id);
        await deps.stores.tasks.create({
          id: taskId!,
          type: kind.type,
          ownerId: input.userId,
          ownerUsername: input.username,
          envIds: kind.envIds(publish),
          dashboardIds: kind.dashboardIds(publish),
          params: { candidate_id: candidate.id, mode },
          idempotencyKey: input.decisionId,
          summary,
          details: details ?? null,
          workflowType: kind.workflow,
          workflowInput: publish,
          firstLogLine: `task created by ${input.username ?? 'system'} through release workflow ${releaseWorkflowId(candidate.id)}: ${summary}`,
        });
      }
      return {
        candidate_id: candidate.id,
        decision: input.action,
        state: decided.state_after,
        by: decided.by_username,
        at: decided.at.toISOString(),
        comment: decided.comment,
        ...(taskId ? { task_id: taskId } : {}),
        ...(publish ? { publish } : {}),
      };
    },

    /**
     * Publishes one artifact into the target: its digest is held to the manifest, what it replaces
     * is backed up first, then the exact files are imported through the migration path, and the
     * target's re-export is digested again (portable digest) to prove it holds what was approved.
     */
    async publishReleaseArtifact(input: { candidateId: string; dashboardUuid: string; position: number }): Promise<ReleaseItem> {
      const { log } = Context.current();
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
      const at = { step: 'backup' };
      try {
        const target = await upstreamFor(deps, candidate.target_env_id);
        const existing = await target.findDashboard(input.dashboardUuid);
        let backupId: string | null = null;
        if (existing) {
          const b = await backups.backupDashboard({ envId: candidate.target_env_id, dashboardId: existing.id });
          if (b.item.outcome !== 'succeeded' || !b.item.backup_id)
            return {
              ...item,
              step: 'backup',
              error: `backing up what the publish would replace failed: ${b.item.error ?? 'no backup'}; nothing was imported`,
              next_actions: b.item.next_actions,
            };
          backupId = b.item.backup_id;
          log.info(`backed up dashboard ${existing.id} of ${candidate.target_env_id} as ${backupId} before publishing over it`);
        }
        at.step = 'plan';
        const index = await TargetIndex.build(target);
        const prepared = await plan(candidate, artifact, input.position, target, index);
        if (prepared.blocked) return { ...item, step: 'plan', error: prepared.blocked.error, next_actions: prepared.blocked.next_actions };
        at.step = 'import';
        const r = await importPrepared({
          intents: deps.stores.migrationItems,
          taskId: currentTaskId(),
          sourceDashboardId: input.position,
          target,
          prepared,
          learned: [],
          overwrite: true,
        });
        await store.recordPublication({
          candidate_id: candidate.id,
          dashboard_uuid: input.dashboardUuid,
          env_id: candidate.target_env_id,
          target_dashboard_id: r.targetDashboardId,
          backup_id: backupId,
          existed: Boolean(existing),
        });
        at.step = 'verify';
        const back = filesFromExport(await target.exportDashboards([r.targetDashboardId]));
        const verified = portableDigest(back.files) === artifact.portable_sha256;
        const differences = verified ? [] : portableDifferences(artifact.files, back.files);
        log.info(
          `published '${item.title}' as dashboard ${r.targetDashboardId} of ${candidate.target_env_id}; ${
            verified
              ? "the target's re-export has the manifest's content digest"
              : `the target's re-export differs: ${differences.map((d) => `${d.path} (${d.keys.join(', ')})`).join('; ')}`
          }`,
        );
        return {
          ...item,
          status: 'published',
          outcome: 'succeeded',
          target_dashboard_id: r.targetDashboardId,
          backup_id: backupId,
          verified,
          ...(differences.length ? { differences } : {}),
        };
      } catch (err) {
        const f = itemFailure(err, { step: at.step, item: `dashboard ${input.dashboardUuid}`, envId: candidate.target_env_id });
        log.error(`publishing ${input.dashboardUuid} failed at ${at.step}: ${f.error}`);
        return { ...item, ...f };
      }
    },

    /** Puts back what a publish replaced (its backup), or removes a dashboard the publish created. */
    async revokeReleaseArtifact(input: { candidateId: string; dashboardUuid: string }): Promise<ReleaseItem> {
      const { log } = Context.current();
      const p = (await store.publications(input.candidateId)).find((x) => x.dashboard_uuid === input.dashboardUuid);
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
        const r = await backups.restoreBackup({ backupId: p.backup_id, envId: p.env_id, dashboardId: p.target_dashboard_id ?? 0 });
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
    },

    /** The candidate's state after its publish or revoke task (a no-op when something else moved it). */
    async settleRelease(input: { candidateId: string; mode: 'publish' | 'revoke'; failed: number }): Promise<void> {
      if (input.mode === 'publish') await store.settle(input.candidateId, ['publishing'], input.failed ? 'publish_failed' : 'published');
      else await store.settle(input.candidateId, ['revoking'], input.failed ? 'published' : 'revoked');
    },
  };
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
