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
 *
 * A rerun reads wider: once a batch found every one of its dashboards unchanged, the next reads up
 * to RERUN_BATCH (widensNext), its imports still bounded by IMPORT_LIMIT and its verifications
 * started in parts of MAX_BATCH.
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

/**
 * Most dashboards a batch reads after one that found all of its dashboards unchanged. Such a batch
 * costs both exports, which grow with its dashboards, and a few lists (the dashboards', charts' and
 * datasets' rows for the companions' comparison), which cost per call far more than per row
 * (measured in docs/benchmarks.md, "Wide rerun batches"): four batches' lists in one, and a quarter
 * of the activities. A wide batch that finds dashboards changed plans and imports up to IMPORT_LIMIT of
 * them and leaves the rest waiting for the next batch, as any batch does.
 */
export const RERUN_BATCH = 64;

/** What a batch measured of itself for widensNext. */
export interface BatchReadMeasure {
  /** Dashboards the batch held, and how many of them it found unchanged from its two exports. */
  dashboards: number;
  unchanged: number;
  /** The source export it read for them (a zip's directory: entries and unpacked bytes); null when it read none itself. */
  sourceExport: { entries: number; bytes: number } | null;
  /** The bundle limits an export is read within (BUNDLE_MAX_MB, MAX_BUNDLE_FILES). */
  maxBytes: number;
  maxEntries: number;
}

/**
 * Whether the next batch may read RERUN_BATCH dashboards: when this one found every dashboard
 * unchanged and its own source export, scaled to RERUN_BATCH dashboards, stays within a quarter of
 * the bundle limits (a wide export never nears the size at which it would be refused). A batch
 * that did not export its dashboards itself (an earlier batch read them ahead) does not widen.
 */
export function widensNext(m: BatchReadMeasure): boolean {
  if (m.dashboards === 0 || m.unchanged < m.dashboards || !m.sourceExport) return false;
  const scale = RERUN_BATCH / m.dashboards;
  return m.sourceExport.entries * scale <= m.maxEntries / 4 && m.sourceExport.bytes * scale <= m.maxBytes / 4;
}

/** Whether a batch sends the dashboards it holds ready to Superset in one import call: when it holds more than one. */
export function importsTogether(ready: number): boolean {
  return ready > 1;
}
