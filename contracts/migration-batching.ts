/**
 * How a migration batches: the one place its numbers are decided (docs/migration-batching.md
 * says it in words). The workflow (workflows/migration.ts) takes each batch's size and import
 * limit from here; the batch activity (domain/migration/batch.ts) asks here whether its
 * imports go to Superset in one call.
 *
 * A batch reads up to MAX_BATCH dashboards (one export call for all, one for the target's
 * copies) and plans them in order, recording at once every outcome that needs no import
 * (unchanged, planned, blocked), then imports the rest together (IMPORT_LIMIT is MAX_BATCH, so
 * none is left waiting; the workflow still takes dashboards left waiting by a run resumed from
 * the older rule of a lone first import).
 *
 * Verification runs beside the imports: as soon as a batch returns, the workflow starts one
 * verification activity for the dashboards it imported (at most MAX_BATCH) and goes on to the next
 * batch without waiting; it awaits every verification it started before it continues as new and
 * before the task ends, and hands the run's last batch to the next run, which verifies it beside
 * its first (workflows/migration.ts HAND_OVER_VERIFICATION). Each verification activity is safe to repeat (it skips the dashboards an
 * earlier attempt verified) and keeps each chart's result in the outcome rows, never in the
 * workflow's history. How many chart queries reach one environment at once is bounded by the
 * worker's VERIFY_CONCURRENCY, per environment (domain/migration/chart-check/limit.ts),
 * however many verifications overlap.
 */

/** Most dashboards a batch reads and plans; also the most a verification activity checks. */
export const MAX_BATCH = 16;

/**
 * Every batch imports up to MAX_BATCH dashboards, in one import call: there is no lone first
 * "probe" import. What a probe would show is shown by the joint import itself: keys the target
 * rejects or requires (another release) are learned from Superset's refusal of the lot and the lot
 * is sent again (domain/migration/import.ts, the same rule as for one dashboard
 * alone), and the rules learned go to every later batch; any other refusal changes nothing
 * (Superset imports a bundle in one transaction) and each dashboard is then imported alone, with
 * its own answer. A probe cost a second batch: a second plan of the dashboards left waiting, a
 * second import call (Superset's import costs about 0.2 s a call plus 15 ms a dashboard, measured
 * in bench:migration's batch log) and a second verification activity, about a quarter of a
 * 10-dashboard migration (docs/benchmarks.md).
 */
export const IMPORT_LIMIT = MAX_BATCH;

/** Whether a batch sends the dashboards it holds ready to Superset in one import call: when it holds more than one. */
export function importsTogether(ready: number): boolean {
  return ready > 1;
}
