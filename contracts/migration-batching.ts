/**
 * How a migration batches: the one place its numbers are decided (docs/migration-batching.md
 * says it in words). The workflow (workflows/migration.ts) takes each batch's size and import
 * limit from here; the batch activity (activities/dashboard-migration/batch.ts) asks here whether its
 * imports go to Superset in one call.
 *
 * A batch reads up to MAX_BATCH dashboards (one export call for all, one for the target's
 * copies) and plans them in order, recording at once every outcome that needs no import
 * (unchanged, planned, blocked), until it holds as many to import as its limit. The rest wait
 * for the next batch, which plans them against the target as it is then.
 *
 * Verification runs beside the imports: as soon as a batch returns, the workflow starts one
 * verification activity for the dashboards it imported (at most MAX_BATCH) and goes on to the next
 * batch without waiting; it awaits every verification it started before it continues as new and
 * before the task ends. Each verification activity is safe to repeat (it skips the dashboards an
 * earlier attempt verified) and keeps each chart's result in the outcome rows, never in the
 * workflow's history. How many chart queries reach one environment at once is bounded by the
 * worker's VERIFY_CONCURRENCY, per environment (activities/dashboard-migration/chart-check/limit.ts),
 * however many verifications overlap.
 */

/** Most dashboards a batch reads and plans; also the most a verification activity checks. */
export const MAX_BATCH = 16;

/**
 * The first batch imports one dashboard, alone: a systematic problem (a release that refuses a
 * field) shows on one dashboard, with Superset's own answer, and a cancel lands early.
 */
export const FIRST_IMPORT_LIMIT = 1;

/**
 * The import limit of the batch after one whose limit was `limit`: 1, then MAX_BATCH. Superset's
 * import costs about 0.2 s a call plus 15 ms a dashboard (bench:migration's batch log), so every
 * call after the first probe is the fixed cost again. A second cautious batch of two imported
 * alone cost two calls, one more batch and a second plan of the dashboards left waiting
 * (~0.65 s of 3.6 s on 10 dashboards) and protected nothing the joint import's fallback does not.
 */
export function nextImportLimit(_limit: number): number {
  return MAX_BATCH;
}

/**
 * Whether a batch sends the dashboards it holds ready (`ready`) to Superset in one import call:
 * every batch after the first (its limit above the first's), when it holds more than one. The
 * first batch's probe went alone, so a systematic refusal has shown on its own dashboard by then.
 * A refused joint import changes nothing (Superset imports a bundle in one transaction); its
 * dashboards are then planned again and imported one by one, each with Superset's own answer.
 */
export function importsTogether(importLimit: number, ready: number): boolean {
  return ready > 1 && importLimit > FIRST_IMPORT_LIMIT;
}
