/** One batch of a migration task, as its steps (./batch.ts) hand it on: explicit state instead of a closure's variables. */
import type { MigrationBatchInput } from '../../contracts/migration.ts';
import type { TargetState } from '../../db/dashboard-migration/store.ts';
import type { BatchDashboard, Log, MigrationServices, Request } from './context.ts';
import type { PrefetchRun } from './prefetch-runs.ts';
import type { BatchOutcomes } from './record.ts';

/** The reads a batch starts at once, beside the indexes' (./read-ahead.ts). */
export interface EarlyReads {
  /** When the batch started (ms): an index read since needs no refresh. */
  at: number;
  /** The source's export of the batch's dashboards this worker has not read yet, settled once it is kept in the worker's cache (null: none to read, or not read together). */
  sourceExport: Promise<Uint8Array | null>;
  /** Source dashboard id → its copy in the target, from the last migrations' records. */
  recordedTargets: Map<number, number>;
  /** The target's export of those copies, with the ids exported (null: too few to read together). */
  targetExport: Promise<{ ids: number[]; zip: Uint8Array } | null>;
}

/** One batch of a task, as its steps (./batch.ts) hand it on. */
export interface BatchContext {
  svc: MigrationServices;
  input: MigrationBatchInput;
  taskId: string;
  log: Log;
  /** The batch's dashboards without an outcome yet (the others were recorded by an earlier attempt). */
  todo: BatchDashboard[];
  /** What earlier migrations of these dashboards into this target recorded, by source dashboard id. */
  records: Map<number, TargetState>;
  /** Every dashboard came into the target through an earlier migration: first told unchanged from both exports. */
  rerun: boolean;
  reads: EarlyReads;
  /** The batch's outcomes as they are recorded, its progress and what it learned. */
  outcomes: BatchOutcomes;
  /** What the source's reads and both sides' people are kept under: the task's snapshot, shared by its batches on this worker (./caches.ts). */
  taskSnapshot: object;
  /** The batch's run of the task's prefetch plan: every read it starts ahead goes through it (./prefetch-plan.ts). */
  prefetch: PrefetchRun;
}

/** What a read begun ahead of the verification needs of its batch (./source-checks-ahead.ts, ./target-checks-ahead.ts). */
export type AheadScope = Pick<BatchContext, 'svc' | 'taskId' | 'prefetch'> & { input: Request };
