import type { Knex } from 'knex';

/**
 * What the last migration of each dashboard wrote into each target environment (table
 * `migration_target_state`), so a rerun can tell a dashboard with nothing to import.
 *
 * Kept here rather than as a marker in the target: Superset has no field of its own to hold it
 * that its import and export would leave alone, and any marker written into the dashboard would
 * itself show in the export and in the UI. The target's side is still read from the target: the
 * hash of its own export, taken right after the import and compared with its export at planning,
 * so an edit made in Superset since (dashboard, chart or dataset) is never mistaken for unchanged.
 */
export interface TargetState {
  target_env_id: string;
  dashboard_uuid: string;
  source_env_id: string;
  bundle_hash: string;
  target_hash: string;
  target_dashboard_id: number;
  /** The source dashboard it came from (null in records from before it was kept). */
  source_dashboard_id: number | null;
  task_id: string | null;
  /** How the last verification of this import ended; null until verified (or in older records). */
  verification: 'passed' | 'failed' | null;
  /** When that verification was made, and by which task (an import's, or a rerun's check of the unchanged target); null in older records. */
  verified_at: Date | null;
  verified_task_id: string | null;
  updated_at: Date;
}

/**
 * May a rerun call this dashboard unchanged and skip it? Not when its last verification in the
 * target failed: the shortcut never skips a check whose last result was a failure (the rerun
 * imports and verifies it again instead).
 */
export function mayShortcut(state: Pick<TargetState, 'verification'>): boolean {
  return state.verification !== 'failed';
}

export class MigrationStateStore {
  private readonly knex: Knex;
  constructor(knex: Knex) {
    this.knex = knex;
  }

  async get(targetEnvId: string, dashboardUuid: string): Promise<TargetState | undefined> {
    return this.knex<TargetState>('migration_target_state').where({ target_env_id: targetEnvId, dashboard_uuid: dashboardUuid }).first();
  }

  /** What an import left in the target; its verification is not known yet. */
  async record(state: Omit<TargetState, 'updated_at' | 'verification' | 'verified_at' | 'verified_task_id'>): Promise<void> {
    await this.recordMany([state]);
  }

  /** What several imports left in the target, in one statement (a verification's dashboards). */
  async recordMany(states: Array<Omit<TargetState, 'updated_at' | 'verification' | 'verified_at' | 'verified_task_id'>>): Promise<void> {
    if (!states.length) return;
    const rows = states.map((s) => ({
      ...s,
      verification: null,
      verified_at: null,
      verified_task_id: null,
      updated_at: this.knex.fn.now(),
    }));
    await this.knex('migration_target_state').insert(rows).onConflict(['target_env_id', 'dashboard_uuid']).merge(Object.keys(rows[0]!));
  }

  /** The target's export changed by this service's own writes after the import (companions): its new hash, the rest kept. */
  async retarget(targetEnvId: string, dashboardUuid: string, targetHash: string): Promise<void> {
    await this.knex('migration_target_state')
      .where({ target_env_id: targetEnvId, dashboard_uuid: dashboardUuid })
      .update({ target_hash: targetHash, updated_at: this.knex.fn.now() });
  }

  /**
   * How the verification of what the import left ended, made by task `taskId` (the import's, or a
   * rerun's that checked the unchanged target again) at `at` (now when not given).
   */
  async recordVerification(targetEnvId: string, dashboardUuid: string, passed: boolean, taskId: string, at?: Date): Promise<void> {
    await this.recordVerifications(targetEnvId, [{ dashboardUuid, passed }], taskId, at);
  }

  /** recordVerification for several dashboards checked together: one statement for those that passed, one for the rest. */
  async recordVerifications(
    targetEnvId: string,
    checked: ReadonlyArray<{ dashboardUuid: string; passed: boolean }>,
    taskId: string,
    at?: Date,
  ): Promise<void> {
    for (const passed of [true, false]) {
      const uuids = checked.filter((c) => c.passed === passed).map((c) => c.dashboardUuid);
      if (!uuids.length) continue;
      await this.knex('migration_target_state')
        .where({ target_env_id: targetEnvId })
        .whereIn('dashboard_uuid', uuids)
        .update({ verification: passed ? 'passed' : 'failed', verified_at: at ?? this.knex.fn.now(), verified_task_id: taskId });
    }
  }

  /** What the last migrations of these source dashboards into the target recorded (those known), by source id. */
  async recordsOf(targetEnvId: string, sourceEnvId: string, sourceDashboardIds: number[]): Promise<Map<number, TargetState>> {
    if (!sourceDashboardIds.length) return new Map();
    const rows = await this.knex<TargetState>('migration_target_state')
      .where({ target_env_id: targetEnvId, source_env_id: sourceEnvId })
      .whereIn('source_dashboard_id', sourceDashboardIds);
    return new Map(rows.map((r) => [r.source_dashboard_id!, r]));
  }

  /** Forgets a dashboard's state (its import was refused or it is being imported again). */
  async forget(targetEnvId: string, dashboardUuid: string): Promise<void> {
    await this.knex('migration_target_state').where({ target_env_id: targetEnvId, dashboard_uuid: dashboardUuid }).delete();
  }
}
