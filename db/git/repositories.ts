import type { Knex } from 'knex';

export interface GitRepositoryRow {
  dashboard_uuid: string;
  title: string | null;
  config_id: string | null;
  remote_name: string | null;
  remote_url: string | null;
  branch: string;
  synced_env_id: string | null;
  synced_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface GitDeploymentRow {
  id: string;
  dashboard_uuid: string;
  env_id: string;
  commit: string;
  target_dashboard_id: number | null;
  task_id: string;
  deployed_by: string | null;
  approved_by: string | null;
  deployed_at: Date;
}

// Advisory-lock class for dashboard working copies (the second key is the UUID's hash).
const LOCK_CLASS = 0x6769; // "gi"

/**
 * The dashboard repositories: bindings of a dashboard id in an environment to its UUID, the
 * repository row, the deploys of pinned commits, and the lock that keeps two operations (in the
 * API or in any worker) from touching one working copy at once.
 */
export class GitRepositoryStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async get(dashboardUuid: string): Promise<GitRepositoryRow | undefined> {
    return this.knex<GitRepositoryRow>('git_repositories').where({ dashboard_uuid: dashboardUuid }).first();
  }

  /** UUID → remote URL (null: a local repository) for the ones that have a repository. */
  async remoteUrls(dashboardUuids: readonly string[]): Promise<Map<string, string | null>> {
    if (!dashboardUuids.length) return new Map();
    const rows = await this.knex<GitRepositoryRow>('git_repositories')
      .whereIn('dashboard_uuid', dashboardUuids as string[])
      .select('dashboard_uuid', 'remote_url');
    return new Map(rows.map((r) => [r.dashboard_uuid, r.remote_url]));
  }

  async upsert(row: Pick<GitRepositoryRow, 'dashboard_uuid' | 'title' | 'config_id' | 'remote_name' | 'remote_url' | 'branch'>) {
    const [saved] = await this.knex<GitRepositoryRow>('git_repositories')
      .insert(row)
      .onConflict('dashboard_uuid')
      .merge({ ...row, updated_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return saved;
  }

  async markSynced(dashboardUuid: string, envId: string, title: string | null): Promise<void> {
    await this.knex('git_repositories')
      .where({ dashboard_uuid: dashboardUuid })
      .update({ synced_env_id: envId, synced_at: this.knex.fn.now(), updated_at: this.knex.fn.now(), ...(title ? { title } : {}) });
  }

  async bind(envId: string, dashboardId: number, dashboardUuid: string): Promise<void> {
    await this.knex('git_dashboard_bindings')
      .insert({ env_id: envId, dashboard_id: dashboardId, dashboard_uuid: dashboardUuid })
      .onConflict(['env_id', 'dashboard_id'])
      .merge({ dashboard_uuid: dashboardUuid });
  }

  /** dashboard id → UUID for the ids of one environment that have a repository. */
  async boundUuids(envId: string, dashboardIds: readonly number[]): Promise<Map<number, string>> {
    if (!dashboardIds.length) return new Map();
    const rows = await this.knex('git_dashboard_bindings')
      .where({ env_id: envId })
      .whereIn('dashboard_id', dashboardIds as number[])
      .select('dashboard_id', 'dashboard_uuid');
    return new Map(rows.map((r: { dashboard_id: number; dashboard_uuid: string }) => [r.dashboard_id, r.dashboard_uuid]));
  }

  async recordDeployment(d: Omit<GitDeploymentRow, 'id' | 'deployed_at'>): Promise<void> {
    await this.knex('git_deployments').insert(d).onConflict('task_id').merge();
    if (d.target_dashboard_id !== null) await this.bind(d.env_id, d.target_dashboard_id, d.dashboard_uuid);
  }

  /** The newest deploy of each of these repositories. */
  async lastDeployments(dashboardUuids: readonly string[]): Promise<Map<string, GitDeploymentRow>> {
    if (!dashboardUuids.length) return new Map();
    const rows = await this.knex<GitDeploymentRow>('git_deployments')
      .distinctOn('dashboard_uuid')
      .whereIn('dashboard_uuid', dashboardUuids as string[])
      .orderBy([{ column: 'dashboard_uuid' }, { column: 'deployed_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return new Map(rows.map((r) => [r.dashboard_uuid, r]));
  }

  /**
   * Runs `work` holding the working copy's lock (exclusive for writes, shared for reads), in a
   * transaction whose end releases it: a crashed process never leaves a lock behind.
   */
  async withLock<T>(dashboardUuids: readonly string[], mode: 'shared' | 'exclusive', work: () => Promise<T>): Promise<T> {
    const keys = [...new Set(dashboardUuids)].sort();
    if (!keys.length) return work();
    const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    return this.knex.transaction(async (trx) => {
      // One statement takes every lock, in a fixed order, so two batches cannot deadlock.
      await trx.raw(`select ${fn}(?, hashtext(k)) from unnest(?::text[]) with ordinality as u(k, n) order by n`, [LOCK_CLASS, keys]);
      return work();
    });
  }
}
