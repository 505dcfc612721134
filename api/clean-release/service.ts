import type { VerificationMode } from '../../contracts/browser-check.ts';
import path from 'node:path';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { ApplicationFailure } from '@temporalio/common';
import {
  RELEASE_WORKFLOW,
  releaseWorkflowId,
  type HostOccurrence,
  type ReleaseAction,
  type ReleaseDecision,
  type ReleaseDecisionOutcome,
  type ReleaseSource,
  type Violation,
} from '../../contracts/clean-release.ts';
import { releaseDecisionUpdate } from '../../contracts/workflow-messages.ts';
import {
  InvalidStateError,
  type ArtifactRow,
  type CandidateRow,
  type DbMapping,
  type ManifestBody,
  selfApprovalRefusal,
  type CleanReleaseStore,
} from '../../db/clean-release/store.ts';
import type { GitConfigStore } from '../../db/git/configs.ts';
import type { GitRepositoryStore } from '../../db/git/repositories.ts';
import { createBackupStore, type BackupStore } from '../../lib/backup-store/index.ts';
import { BundleError } from '../../lib/bundles/bundle.ts';
import { maxBundleBytes } from '../../lib/bundles/limit.ts';
import { artifactDigest, portableDigest, sha256Json } from '../../lib/clean-release/digest.ts';
import { hostsInFiles } from '../../lib/clean-release/hosts.ts';
import { readPairSettings } from '../../db/environments/pair-settings.ts';
import { artifactsAsWritten, releaseSourceEnv } from '../../db/clean-release/written.ts';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import type { Principal } from '../auth/principal.ts';
import type { Stores } from '../../db/stores.ts';
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import type { TaskService } from '../tasks/service.ts';
import { toReportView } from './schemas.ts';
import { hostViolations, provenanceViolations } from '../../db/clean-release/checks.ts';
import { readBuilt, type BuiltArtifactInput } from './built.ts';

const hostOf = (url: string | null | undefined): string | null => {
  if (!url) return null;
  try {
    return new URL(url).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
};

/**
 * Candidates, artifacts, manifests, prepare and checks; decisions go to the candidate's release
 * workflow as updates. Artifacts are read from their pinned sources here (a commit of the
 * dashboard's repository, a stored backup): reading changes nothing and is quick.
 */
/** What the service uses, all built before it in api/bootstrap.ts (not the context type: that names this service). */
export interface CleanReleaseDeps {
  config: Config;
  logger: Logger;
  stores: Stores;
  tasks: TaskService;
  temporal: Client;
}

export class CleanReleaseService {
  readonly store: CleanReleaseStore;
  private readonly app: CleanReleaseDeps;
  private readonly repos: GitRepositoryStore;
  private readonly configs: GitConfigStore;
  /** The configured backup store, opened on the first backup read. */
  private blobs?: BackupStore;

  constructor(app: CleanReleaseDeps) {
    this.app = app;
    this.store = app.stores.cleanRelease;
    this.repos = app.stores.gitRepositories;
    this.configs = app.stores.gitConfigs;
  }

  async register(
    input: { name: string; target_env_id: string; sources: ReleaseSource[]; db_mappings: DbMapping[] },
    principal: Principal,
  ): Promise<CandidateRow> {
    await this.app.stores.environments.get(input.target_env_id);
    const candidate = await this.store.createCandidate({ ...input, created_by: principal.userId, created_by_username: principal.username });
    // The release workflow starts now so operators see the candidate in the Temporal console; a
    // start lost here is made good by the first decision (update-with-start).
    await this.app.temporal.workflow
      .start(RELEASE_WORKFLOW, this.startOptions(candidate.id))
      .catch((err: unknown) => this.app.logger.warn({ err, candidate_id: candidate.id }, 'release workflow not started yet'));
    return candidate;
  }

  private startOptions(candidateId: string) {
    return {
      workflowId: releaseWorkflowId(candidateId),
      taskQueue: this.app.config.TEMPORAL_TASK_QUEUE,
      args: [{ candidateId }] as [{ candidateId: string }],
      workflowIdConflictPolicy: 'USE_EXISTING' as const,
      staticSummary: `Release candidate ${candidateId}`,
    };
  }

  /**
   * Reads every pinned source (or takes the artifacts built elsewhere, `built`) into a normalised
   * artifact with its digests and hosts. `by` is recorded among the candidate's requesters:
   * whoever imports or changes its artifacts may not approve it.
   */
  async importArtifacts(
    candidateId: string,
    by: Principal,
    sources?: ReleaseSource[],
    built?: BuiltArtifactInput[],
  ): Promise<ArtifactRow[]> {
    const candidate = await this.store.getCandidate(candidateId);
    // One at a time, as before: each read may hold a repository's lock or fetch a remote.
    const artifacts: Array<ReturnType<CleanReleaseService['artifactOf']>> = [];
    for (const [i, b] of (built ?? []).entries()) artifacts.push(this.artifactOf(await readBuilt(this.app, b, i)));
    for (const source of built ? [] : (sources ?? candidate.sources)) {
      const r = await this.read(source);
      artifacts.push(this.artifactOf({ ...r, source: { ...source, host: r.host?.host ?? null, env_id: r.envId } }));
    }
    if (new Set(artifacts.map((a) => a.dashboard_uuid)).size !== artifacts.length)
      throw new ValidationError('two sources pin the same dashboard: a candidate holds each dashboard once');
    await this.store.putArtifacts(candidate.id, artifacts, by.userId);
    return this.store.artifacts(candidate.id);
  }

  private artifactOf(r: {
    files: Map<string, string>;
    host: { host: string; where: string } | null;
    title: string | null;
    uuid: string;
    source: object;
  }) {
    const hosts: HostOccurrence[] = [
      ...(r.host ? [{ host: r.host.host, role: 'source' as const, where: r.host.where }] : []),
      ...hostsInFiles(r.files).map((f) => ({ host: f.host, role: f.role, where: f.where })),
    ];
    return {
      dashboard_uuid: r.uuid,
      title: r.title,
      source: { host: r.host?.host ?? null, env_id: null, ...r.source } as ArtifactRow['source'],
      files: Object.fromEntries(r.files),
      sha256: artifactDigest(r.files),
      portable_sha256: portableDigest(r.files),
      hosts,
    };
  }

  private async read(source: ReleaseSource): Promise<{
    files: Map<string, string>;
    host: { host: string; where: string } | null;
    title: string | null;
    uuid: string;
    envId: string | null;
  }> {
    if (source.kind === 'git') {
      const row = await this.repos.get(source.dashboard_uuid);
      if (!row) throw new NotFoundError('Dashboard repository', source.dashboard_uuid);
      const wc = new WorkingCopy(
        path.join(this.app.config.GIT_REPOS_DIR ?? path.join(this.app.config.SWITCHYARD_DATA_DIR, 'git'), source.dashboard_uuid),
      );
      let files: Map<string, string>;
      try {
        files = await this.repos.withLock([source.dashboard_uuid], 'shared', () => wc.filesAt(source.commit));
      } catch (err) {
        throw new AppError(
          400,
          'source_unreadable',
          'Bad Request',
          `commit ${source.commit} of repository ${source.dashboard_uuid} cannot be read: ${(err as Error).message}`,
        );
      }
      const dash = [...files.keys()].find((p) => p.startsWith('dashboards/'));
      if (!dash) throw new AppError(400, 'source_unreadable', 'Bad Request', `commit ${source.commit} holds no dashboard`);
      const config = row.config_id ? await this.configs.find(row.config_id) : undefined;
      const remoteHost = hostOf(row.remote_url) ?? hostOf(config?.base_url);
      const title = /dashboard_title: (.*)/.exec(files.get(dash) ?? '')?.[1]?.replace(/^['"]|['"]$/g, '') ?? row.title;
      return {
        files,
        uuid: source.dashboard_uuid,
        envId: row.synced_env_id,
        title,
        host: remoteHost ? { host: remoteHost, where: `git remote of repository ${source.dashboard_uuid}` } : null,
      };
    }
    const backup = await this.app.stores.backups.get(source.backup_id);
    if (!backup) throw new NotFoundError('Backup', source.backup_id);
    const bytes = await (this.blobs ??= createBackupStore(this.app.config)).get(backup.content_hash);
    let parsed: ReturnType<typeof filesFromExport>;
    try {
      parsed = filesFromExport(bytes, maxBundleBytes(this.app.config));
    } catch (err) {
      // The stored zip unpacks within the bundle budget, counted as it inflates (lib/archive/unzip.ts), or not at all.
      if (!(err instanceof BundleError)) throw err;
      throw new AppError(400, 'source_unreadable', 'Bad Request', `backup ${backup.id} cannot be read: ${err.message}`);
    }
    const env = await this.app.stores.environments.find(backup.env_id);
    const envHost = hostOf(env?.base_url);
    return {
      files: parsed.files,
      uuid: parsed.dashboardUuid,
      envId: backup.env_id,
      title: parsed.title,
      host: envHost ? { host: envHost, where: `Superset environment ${backup.env_id} (backup ${backup.id})` } : null,
    };
  }

  async buildManifest(candidateId: string) {
    const candidate = await this.store.getCandidate(candidateId);
    const artifacts = await this.store.artifacts(candidate.id);
    if (!artifacts.length) throw new ConflictError('the candidate has no artifacts yet: import them first', 'no_artifacts');
    if (!['draft', 'blocked'].includes(candidate.state))
      throw new InvalidStateError(candidate.id, candidate.state, 'building a manifest', ['draft', 'blocked']);
    // The rules and saved mappings each artifact will be written under, frozen into the manifest and its digest.
    const froms = [...new Set(artifacts.map((a) => releaseSourceEnv(candidate, a)))];
    const pairs = await Promise.all(froms.map((from) => readPairSettings(this.app.stores, from, candidate.target_env_id)));
    const written = artifactsAsWritten(artifacts, { pairs }, candidate);
    const body: ManifestBody = {
      candidate_id: candidate.id,
      target_env_id: candidate.target_env_id,
      artifacts: written.map((a) => ({
        dashboard_uuid: a.dashboard_uuid,
        title: a.title,
        sha256: a.sha256,
        portable_sha256: a.portable_sha256,
        source: a.source,
        hosts: [...new Set(a.hosts.map((h) => h.host))].sort(),
      })),
      hosts: [...new Set(written.flatMap((a) => a.hosts.map((h) => h.host)))].sort(),
      pairs,
    };
    const manifest = await this.store.createManifest(candidate.id, sha256Json(body), body);
    await this.store.transition(candidate.id, ['draft', 'blocked'], 'draft', 'building a manifest', {
      manifest_id: manifest.id,
      report_id: null,
    });
    return manifest;
  }

  /** `prepared` when every source host is trusted; otherwise `blocked`, one violation per untrusted host. */
  async prepare(candidateId: string): Promise<{ candidate: CandidateRow; violations: Violation[] }> {
    const candidate = await this.store.getCandidate(candidateId);
    if (!candidate.manifest_id) throw new ConflictError('the candidate has no manifest: build it first', 'no_manifest');
    const [stored, registry, policy, manifest] = await Promise.all([
      this.store.artifacts(candidate.id),
      this.store.registry(),
      this.store.policy(),
      this.store.findManifest(candidate.manifest_id),
    ]);
    // The hosts as the artifacts will be written: under the manifest's frozen rules.
    const artifacts = artifactsAsWritten(stored, manifest?.body ?? {}, candidate);
    const violations = [...hostViolations(artifacts, registry, policy.rules), ...provenanceViolations(artifacts)];
    const blocked = violations.some((v) => v.blocking);
    const from = ['draft', 'blocked', 'prepared', 'checked', 'check_failed'] as const;
    const next = await this.store.transition(candidate.id, from, blocked ? 'blocked' : 'prepared', 'preparing', { report_id: null });
    return { candidate: next, violations };
  }

  async startCheck(candidateId: string, principal: Principal) {
    const candidate = await this.store.getCandidate(candidateId);
    if (!candidate.manifest_id) throw new ConflictError('the candidate has no manifest: build and prepare it first', 'no_manifest');
    const report = await this.store.createReport(candidate.id, candidate.manifest_id);
    await this.store.transition(candidate.id, ['prepared', 'checked', 'check_failed'], 'checking', 'checking', { report_id: report.id });
    const { task } = await this.app.tasks.create({
      kind: 'release_check',
      input: { candidateId: candidate.id, reportId: report.id },
      params: { candidate_id: candidate.id, report_id: report.id },
      owner: principal,
    });
    await this.store.attachReportTask(report.id, task.id);
    return { check_id: report.id, report_id: report.id, candidate_id: candidate.id, task_id: task.id, status: 'running' as const };
  }

  async check(checkId: string) {
    const report = await this.store.findReport(checkId);
    if (!report) throw new NotFoundError('Check', checkId);
    const task = report.task_id ? await this.app.tasks.get(report.task_id).catch(() => undefined) : undefined;
    return toReportView(report, task?.status ?? null);
  }

  /** A decision, sent to the candidate's release workflow; its refusals come back as problem bodies. */
  async decide(
    candidateId: string,
    action: ReleaseAction,
    principal: Principal,
    comment?: string,
    verification?: VerificationMode,
  ): Promise<ReleaseDecisionOutcome> {
    const candidate = await this.store.getCandidate(candidateId);
    const refusal = action === 'approve' ? selfApprovalRefusal(candidate, principal.userId) : null;
    if (refusal) throw new AppError(403, 'self_approval', 'Forbidden', refusal);
    const decision: ReleaseDecision = {
      action,
      userId: principal.userId,
      username: principal.username,
      ...(comment ? { comment } : {}),
      ...(action === 'publish' && verification === 'browser' ? { verification } : {}),
    };
    try {
      return await this.app.temporal.workflow.executeUpdateWithStart(releaseDecisionUpdate, {
        args: [decision],
        startWorkflowOperation: new WithStartWorkflowOperation<Workflow>(RELEASE_WORKFLOW, this.startOptions(candidate.id)),
      });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
        const details = (err.cause.details?.[0] ?? {}) as { status?: number } & Record<string, unknown>;
        const { status = 409, ...extra } = details;
        throw new AppError(status, err.cause.type ?? 'conflict', status === 403 ? 'Forbidden' : 'Conflict', err.cause.message, { extra });
      }
      throw err;
    }
  }
}
