import type { Knex } from 'knex';
import type { BackupStore, BackupStoreKind } from '../../lib/backup-store/store.ts';
import { isUuid } from '../../lib/ids.ts';

/** One row of the backup index (`backups` table). */
export interface BackupRow {
  id: string;
  env_id: string;
  dashboard_id: number;
  dashboard_uuid: string | null;
  dashboard_title: string;
  dashboard_slug: string | null;
  content_hash: string;
  size: number;
  store_kind: BackupStoreKind;
  deduplicated: boolean;
  chart_count: number;
  task_id: string | null;
  created_at: Date;
}

export interface NewBackup {
  taskId: string;
  envId: string;
  dashboardId: number;
  dashboardUuid: string | null;
  title: string;
  slug: string | null;
  contentHash: string;
  chartCount: number;
  bytes: Uint8Array;
}

/**
 * The backup index (`backups`), bound to one connection pool: what the API and the activities
 * use. The functions below take the pool themselves (tests call them on their own database).
 */
export class BackupIndexStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  get(id: string): Promise<BackupRow | undefined> {
    return getBackup(this.knex, id);
  }

  list(filter: { envId: string; dashboardId: number }, page: number, pageSize: number) {
    return listBackups(this.knex, filter, page, pageSize);
  }

  ofTask(taskId: string, dashboardId: number): Promise<BackupRow | undefined> {
    return backupOfTask(this.knex, taskId, dashboardId);
  }

  record(store: BackupStore, b: NewBackup): Promise<{ row: BackupRow; created: boolean }> {
    return recordBackup(this.knex, store, b);
  }

  prune(store: BackupStore, scope: { envId: string; dashboardIds: number[] }, policy: RetentionPolicy) {
    return pruneBackups(this.knex, store, scope, policy);
  }
}

export async function getBackup(knex: Knex, id: string): Promise<BackupRow | undefined> {
  if (!isUuid(id)) return undefined;
  return knex<BackupRow>('backups').where({ id }).first();
}

/** Newest first; `id` breaks ties so pages never overlap when two backups share a timestamp. */
export async function listBackups(knex: Knex, filter: { envId: string; dashboardId: number }, page: number, pageSize: number) {
  const base = knex<BackupRow>('backups').where({ env_id: filter.envId, dashboard_id: filter.dashboardId });
  const [{ n }] = await base.clone().count<{ n: string }[]>({ n: '*' });
  const items = await base
    .clone()
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset((page - 1) * pageSize)
    .limit(pageSize);
  const total = Number(n);
  return { items, total, page, page_size: pageSize, has_next: page * pageSize < total };
}

/**
 * Serialises everything that creates or removes a reference to one blob: recording a backup that
 * points at it and pruning the last row that did. Without it, a backup could find the blob
 * present, a concurrent prune could then delete it, and the new row would point at nothing.
 * A transaction-scoped advisory lock keyed by the hash: released on commit, rollback or a dropped
 * connection (a killed worker never leaves it held).
 */
export async function withContentLock<T>(knex: Knex, hash: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 7205))', [`backup-blob:${hash}`]);
    return fn(trx);
  });
}

/** The backup a task already recorded for a dashboard (a retried activity finds its own). */
export async function backupOfTask(knex: Knex, taskId: string, dashboardId: number): Promise<BackupRow | undefined> {
  return knex<BackupRow>('backups').where({ task_id: taskId, dashboard_id: dashboardId }).first();
}

/**
 * Stores the bundle (unless the blob exists) and records one index row for (task, dashboard).
 * Idempotent: a retried activity finds its own row and returns it unchanged, so a crash between
 * the upload and the insert can never yield a second row. `deduplicated` means an earlier backup
 * already referenced this content, so nothing new was stored.
 */
export async function recordBackup(knex: Knex, store: BackupStore, b: NewBackup): Promise<{ row: BackupRow; created: boolean }> {
  const mine = await backupOfTask(knex, b.taskId, b.dashboardId);
  if (mine) return { row: mine, created: false };
  // Upload outside the lock (it may take a while); the check under the lock repairs a blob that
  // a concurrent prune removed in between.
  await store.put(b.contentHash, b.bytes);
  return withContentLock(knex, b.contentHash, async (trx) => {
    if (!(await store.has(b.contentHash))) await store.put(b.contentHash, b.bytes);
    const earlier = await trx('backups').where({ content_hash: b.contentHash, store_kind: store.kind }).first('id');
    const inserted = await trx('backups')
      .insert({
        env_id: b.envId,
        dashboard_id: b.dashboardId,
        dashboard_uuid: b.dashboardUuid,
        dashboard_title: b.title,
        dashboard_slug: b.slug,
        content_hash: b.contentHash,
        size: b.bytes.byteLength,
        store_kind: store.kind,
        deduplicated: Boolean(earlier),
        chart_count: b.chartCount,
        task_id: b.taskId,
      })
      .onConflict(['task_id', 'dashboard_id'])
      .ignore()
      .returning('*');
    if (inserted.length) return { row: inserted[0] as BackupRow, created: true };
    const row = await trx<BackupRow>('backups').where({ task_id: b.taskId, dashboard_id: b.dashboardId }).first();
    return { row: row!, created: false };
  });
}

export interface RetentionPolicy {
  /** Backups kept per (environment, dashboard), newest first. */
  keep: number;
  /** Also drop backups older than this (never the newest one of a dashboard). */
  maxAgeDays?: number;
}

export interface PrunedBackup {
  id: string;
  env_id: string;
  dashboard_id: number;
  content_hash: string;
  created_at: Date;
  blob_deleted: boolean;
}

/**
 * Applies the retention policy to the given dashboards of one environment: index rows past the
 * policy are deleted, and a blob is deleted with the last row that referenced it. Rows kept in
 * another store kind (the store was reconfigured) are left alone: their blobs are out of reach.
 * Each row goes in its own short transaction under the blob's lock, so a concurrent backup of
 * the same content either sees the row gone and re-uploads, or keeps the blob alive.
 */
export async function pruneBackups(
  knex: Knex,
  store: BackupStore,
  scope: { envId: string; dashboardIds: number[] },
  policy: RetentionPolicy,
): Promise<{ pruned: PrunedBackup[]; skippedOtherStore: number }> {
  if (!scope.dashboardIds.length) return { pruned: [], skippedOtherStore: 0 };
  const { rows } = await knex.raw<{ rows: Array<Omit<PrunedBackup, 'blob_deleted'> & { store_kind: string }> }>(
    `select id, env_id, dashboard_id, content_hash, store_kind, created_at from (
       select b.*, row_number() over (partition by env_id, dashboard_id order by created_at desc, id desc) as rn
       from backups b where env_id = ? and dashboard_id = any(?::int[])
     ) ranked
     where rn > 1 and (rn > ? or (?::int is not null and created_at < now() - make_interval(days => ?::int)))
     order by dashboard_id, created_at, id`,
    [scope.envId, scope.dashboardIds, policy.keep, policy.maxAgeDays ?? null, policy.maxAgeDays ?? null],
  );
  const pruned: PrunedBackup[] = [];
  let skippedOtherStore = 0;
  for (const r of rows) {
    if (r.store_kind !== store.kind) {
      skippedOtherStore++;
      continue;
    }
    const outcome = await withContentLock(knex, r.content_hash, async (trx) => {
      const n = await trx('backups').where({ id: r.id }).delete();
      if (n === 0) return 'gone'; // pruned concurrently by another task
      const still = await trx('backups').where({ content_hash: r.content_hash, store_kind: store.kind }).first('id');
      if (still) return 'blob_kept';
      // Deleted while the lock is held and before commit: if this fails, the row comes back.
      await store.delete(r.content_hash);
      return 'blob_deleted';
    });
    if (outcome === 'gone') continue;
    const blobDeleted = outcome === 'blob_deleted';
    pruned.push({
      id: r.id,
      env_id: r.env_id,
      dashboard_id: r.dashboard_id,
      content_hash: r.content_hash,
      created_at: r.created_at,
      blob_deleted: blobDeleted,
    });
  }
  return { pruned, skippedOtherStore };
}
