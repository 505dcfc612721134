/**
 * The clean-release store: the only code touching the `release_*` tables. Every state change is
 * one conditional update (`where state in (...)`), so two racing decisions cannot both pass.
 */
import type { Knex } from 'knex';
import type {
  BuiltSource,
  CandidateState,
  CheckOutcome,
  HostOccurrence,
  PolicyRule,
  ReleaseSource,
} from '../../contracts/clean-release.ts';
import type { PairSettings } from '../../contracts/env-rules.ts';
import { ConflictError, NotFoundError } from '../../lib/errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface DbMapping {
  database_uuid?: string;
  database_name?: string;
  target_database_id: number;
}

export interface CandidateRow {
  id: string;
  name: string;
  target_env_id: string;
  sources: ReleaseSource[];
  db_mappings: DbMapping[];
  state: CandidateState;
  created_by: string | null;
  created_by_username: string | null;
  /** Everyone who imported or changed its artifacts (user ids): requesters, like its author. */
  artifacts_changed_by: string[];
  manifest_id: string | null;
  report_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ArtifactRow {
  candidate_id: string;
  dashboard_uuid: string;
  title: string | null;
  /** The pinned source, the host it came from and the environment it was exported from (for saved database mappings). */
  source: (ReleaseSource | BuiltSource) & { host: string | null; env_id: string | null };
  files: Record<string, string>;
  sha256: string;
  portable_sha256: string;
  hosts: HostOccurrence[];
  created_at: Date;
}

export interface ManifestBody {
  candidate_id: string;
  target_env_id: string;
  artifacts: Array<{
    dashboard_uuid: string;
    title: string | null;
    sha256: string;
    portable_sha256: string;
    source: ArtifactRow['source'];
    hosts: string[];
  }>;
  hosts: string[];
  /**
   * The rules and saved database mappings of each pair the artifacts come from, frozen when the
   * manifest was built (covered by its digest); absent in manifests from before they were frozen.
   */
  pairs?: PairSettings[];
}

export interface ManifestRow {
  id: string;
  candidate_id: string;
  digest: string;
  body: ManifestBody;
  created_at: Date;
}

export interface ReportRow {
  id: string;
  candidate_id: string;
  manifest_id: string;
  task_id: string | null;
  status: 'running' | 'passed' | 'failed';
  checks: CheckOutcome[];
  created_at: Date;
  finished_at: Date | null;
}

export interface DecisionRow {
  id: string;
  candidate_id: string;
  action: string;
  by_id: string | null;
  by_username: string | null;
  comment: string | null;
  state_after: CandidateState;
  task_id: string | null;
  at: Date;
}

export interface PublicationRow {
  candidate_id: string;
  dashboard_uuid: string;
  env_id: string;
  target_dashboard_id: number | null;
  backup_id: string | null;
  existed: boolean;
  published_at: Date;
}

export interface Registry {
  hosts: string[];
}
export interface Policy {
  rules: PolicyRule[];
}

export const DEFAULT_POLICY: Policy = {
  rules: [
    { rule: 'trusted_sources', mode: 'enforce' },
    { rule: 'trusted_database_hosts', mode: 'enforce' },
    { rule: 'accepted_llm_text', mode: 'warn' },
    { rule: 'dry_run_migration', mode: 'enforce' },
  ],
};

/** The candidate is in a state the operation cannot start from: 409 naming the state. */
export class InvalidStateError extends ConflictError {
  constructor(candidateId: string, state: string, operation: string, allowed: readonly string[]) {
    super(`Candidate ${candidateId} is ${state}; ${operation} needs it to be ${allowed.join(' or ')}`, 'invalid_state', {
      state,
      allowed_states: allowed,
    });
  }
}

/**
 * Why `userId` may not approve the candidate, or null: its requesters (who registered it, and
 * everyone who imported or changed its artifacts) never approve it; another person must. A person
 * is the same person with a password or with an API key (which acts for its creator).
 */
export function selfApprovalRefusal(
  candidate: Pick<CandidateRow, 'created_by' | 'artifacts_changed_by'>,
  userId: string | null,
): string | null {
  if (!userId) return null;
  if (candidate.created_by === userId) return 'the person who registered a candidate cannot approve it: another person must';
  if (candidate.artifacts_changed_by.includes(userId))
    return "a person who imported or changed a candidate's artifacts cannot approve it: another person must";
  return null;
}

export class CleanReleaseStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async createCandidate(
    c: Pick<CandidateRow, 'name' | 'target_env_id' | 'sources' | 'db_mappings' | 'created_by' | 'created_by_username'>,
  ): Promise<CandidateRow> {
    const [row] = await this.knex<CandidateRow>('release_candidates')
      .insert({ ...c, sources: JSON.stringify(c.sources) as never, db_mappings: JSON.stringify(c.db_mappings) as never })
      .returning('*');
    return row!;
  }

  async findCandidate(id: string): Promise<CandidateRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.knex<CandidateRow>('release_candidates').where({ id }).first();
  }

  async getCandidate(id: string): Promise<CandidateRow> {
    const row = await this.findCandidate(id);
    if (!row) throw new NotFoundError('Release candidate', id);
    return row;
  }

  async listCandidates(page: number, pageSize: number): Promise<{ rows: CandidateRow[]; total: number }> {
    const [rows, [{ count }]] = await Promise.all([
      this.knex<CandidateRow>('release_candidates')
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .offset((page - 1) * pageSize)
        .limit(pageSize),
      this.knex('release_candidates').count<{ count: string }[]>('* as count'),
    ]);
    return { rows, total: Number(count) };
  }

  /**
   * Moves the candidate from one of `from` to `to` in one conditional update; 409 naming the state
   * when it is elsewhere (read after the failed update, so the message tells the truth).
   */
  async transition(
    id: string,
    from: readonly CandidateState[],
    to: CandidateState,
    operation: string,
    extra: Partial<Pick<CandidateRow, 'manifest_id' | 'report_id'>> = {},
    trx: Knex = this.knex,
  ): Promise<CandidateRow> {
    const [row] = await trx<CandidateRow>('release_candidates')
      .where({ id })
      .whereIn('state', from as CandidateState[])
      .update({ state: to, ...extra, updated_at: trx.fn.now() as never })
      .returning('*');
    if (row) return row;
    const current = await trx<CandidateRow>('release_candidates').where({ id }).first();
    if (!current) throw new NotFoundError('Release candidate', id);
    throw new InvalidStateError(id, current.state, operation, from);
  }

  /** Replaces artifacts; `by` (a user id) is recorded among those who changed them. */
  async putArtifacts(candidateId: string, artifacts: Array<Omit<ArtifactRow, 'candidate_id' | 'created_at'>>, by: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      // Artifacts change only while the candidate is a draft (or blocked, to re-pin a source).
      const [c] = await trx('release_candidates').where({ id: candidateId }).forUpdate().select('state');
      if (!c) throw new NotFoundError('Release candidate', candidateId);
      if (!['draft', 'blocked', 'prepared'].includes(c.state))
        throw new InvalidStateError(candidateId, c.state, 'importing artifacts', ['draft', 'blocked', 'prepared']);
      for (const a of artifacts) {
        await trx('release_artifacts')
          .insert({
            candidate_id: candidateId,
            ...a,
            source: JSON.stringify(a.source),
            files: JSON.stringify(a.files),
            hosts: JSON.stringify(a.hosts),
          })
          .onConflict(['candidate_id', 'dashboard_uuid'])
          .merge();
      }
      // New content: any manifest or report built before no longer describes the candidate.
      await trx('release_candidates')
        .where({ id: candidateId })
        .update({
          state: 'draft',
          manifest_id: null,
          report_id: null,
          artifacts_changed_by: trx.raw('array(select distinct unnest(array_append(artifacts_changed_by, ?::text)))', [by]),
          updated_at: trx.fn.now(),
        });
    });
  }

  /** One artifact (a publish reads its own, not every artifact's files). */
  async artifact(candidateId: string, dashboardUuid: string): Promise<ArtifactRow | undefined> {
    return this.knex<ArtifactRow>('release_artifacts').where({ candidate_id: candidateId, dashboard_uuid: dashboardUuid }).first();
  }

  async artifacts(candidateId: string): Promise<ArtifactRow[]> {
    return this.knex<ArtifactRow>('release_artifacts').where({ candidate_id: candidateId }).orderBy('dashboard_uuid');
  }

  async createManifest(candidateId: string, digest: string, body: ManifestBody): Promise<ManifestRow> {
    const [row] = await this.knex<ManifestRow>('release_manifests')
      .insert({ candidate_id: candidateId, digest, body: JSON.stringify(body) as never })
      .returning('*');
    return row!;
  }

  async findManifest(id: string): Promise<ManifestRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.knex<ManifestRow>('release_manifests').where({ id }).first();
  }

  async latestManifest(candidateId: string): Promise<ManifestRow | undefined> {
    return this.knex<ManifestRow>('release_manifests').where({ candidate_id: candidateId }).orderBy('created_at', 'desc').first();
  }

  async registry(): Promise<Registry> {
    const row = await this.knex('release_settings').where({ key: 'registry' }).first();
    return (row?.value as Registry | undefined) ?? { hosts: [] };
  }

  async policy(): Promise<Policy> {
    const row = await this.knex('release_settings').where({ key: 'policy' }).first();
    return (row?.value as Policy | undefined) ?? DEFAULT_POLICY;
  }

  async putSetting(key: 'registry' | 'policy', value: Registry | Policy, by: string | null): Promise<void> {
    await this.knex('release_settings')
      .insert({ key, value: JSON.stringify(value), updated_by: by, updated_at: this.knex.fn.now() })
      .onConflict('key')
      .merge();
  }

  async createReport(candidateId: string, manifestId: string): Promise<ReportRow> {
    const [row] = await this.knex<ReportRow>('release_reports')
      .insert({ candidate_id: candidateId, manifest_id: manifestId })
      .returning('*');
    return row!;
  }

  async attachReportTask(reportId: string, taskId: string): Promise<void> {
    await this.knex('release_reports').where({ id: reportId }).update({ task_id: taskId });
  }

  async findReport(id: string): Promise<ReportRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.knex<ReportRow>('release_reports').where({ id }).first();
  }

  /** Stores the report's outcome and moves the candidate from `checking` (idempotent: a retried activity finds it done). */
  async finishReport(reportId: string, passed: boolean, checks: CheckOutcome[]): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const report = await trx<ReportRow>('release_reports').where({ id: reportId }).forUpdate().first();
      if (!report || report.status !== 'running') return;
      await trx('release_reports')
        .where({ id: reportId })
        .update({ status: passed ? 'passed' : 'failed', checks: JSON.stringify(checks), finished_at: trx.fn.now() });
      await trx('release_candidates')
        .where({ id: report.candidate_id, state: 'checking', report_id: reportId })
        .update({ state: passed ? 'checked' : 'check_failed', updated_at: trx.fn.now() });
    });
  }

  /** The state change and its decision record in one transaction: both or neither. */
  async decide(
    candidateId: string,
    from: readonly CandidateState[],
    to: CandidateState,
    operation: string,
    d: Omit<DecisionRow, 'at' | 'candidate_id' | 'state_after'>,
  ): Promise<DecisionRow> {
    return this.knex.transaction(async (trx) => {
      await this.transition(candidateId, from, to, operation, {}, trx);
      const [row] = await trx<DecisionRow>('release_decisions')
        .insert({ ...d, candidate_id: candidateId, state_after: to })
        .returning('*');
      return row!;
    });
  }

  async decisions(candidateId: string): Promise<DecisionRow[]> {
    return this.knex<DecisionRow>('release_decisions').where({ candidate_id: candidateId }).orderBy('at').orderBy('id');
  }

  async recordPublication(p: Omit<PublicationRow, 'published_at'>): Promise<void> {
    await this.knex('release_publications').insert(p).onConflict(['candidate_id', 'dashboard_uuid']).ignore();
  }

  async publications(candidateId: string): Promise<PublicationRow[]> {
    return this.knex<PublicationRow>('release_publications').where({ candidate_id: candidateId }).orderBy('dashboard_uuid');
  }

  /** Sets a state unconditionally from one of `from`; a no-op elsewhere (a finishing task after a retry). */
  async settle(id: string, from: readonly CandidateState[], to: CandidateState): Promise<void> {
    await this.knex('release_candidates')
      .where({ id })
      .whereIn('state', from as CandidateState[])
      .update({ state: to, updated_at: this.knex.fn.now() });
  }
}
