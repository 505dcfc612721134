/**
 * A migration task's prefetch plan: every read the engine starts ahead of the step that needs it,
 * declared once here with the step that starts it, the step that takes it, and what it feeds.
 * A read is started only through a run of ./prefetch-runs.ts under one of these names (a type: the
 * name is a key of PREFETCH_PLAN), which holds it until it is settled:
 *
 * - `itself`: taken by the batch that started it, and awaited before that batch returns;
 * - `next batch`: handed to the task's next batch on this worker, which awaits it before it
 *   returns (its own export waits for the one begun ahead);
 * - `verification`: handed to the verification of the batch's dashboards (the workflow starts it
 *   as the batch returns), which takes each dashboard's part and awaits the read before it returns.
 *
 * Whatever is still held when the task ends (its last engine activity, finishMigration, cancelled
 * or not) is aborted where the read honours its AbortSignal, awaited, and dropped; so is a task
 * this worker no longer hears of (its next batch or verification ran on another worker, or its
 * workflow failed) once it has been idle for PREFETCH_IDLE_MS. docs/migration-batching.md shows
 * this table, checked against it by test/platform/prefetch-plan-doc.test.ts.
 */

/** The engine activities that start or take reads ahead (the workflow's names for them). */
export type EngineActivity = 'migrateBatch' | 'verifyMigratedBatch';

/** Who takes a read: the batch that started it, the task's next batch, or the verification of its dashboards. */
export type Consumer = 'itself' | 'next batch' | 'verification';

/** What a read handed to the verification leaves per dashboard (the keys of HandedParts). */
export type HandedPart = 'sourceCharts' | 'targetChecks' | 'targetExport';

export interface PrefetchRead {
  /** The step of the batch (./batch.ts's steps) that starts it. */
  startedAt: string;
  consumer: Consumer;
  /** The consumer's step that takes it. */
  takenAt: string;
  feeds: string;
  /** Stops at its next step when aborted (the task ended before its consumer took it); else it is awaited. */
  abortable: boolean;
  /** What it leaves per dashboard for the verification to take (a `verification` read only). */
  hands?: readonly HandedPart[];
}

export const PREFETCH_PLAN = {
  sourceExport: {
    startedAt: 'records, as the batch opens',
    consumer: 'itself',
    takenAt: 'read ahead',
    feeds: "each plan's source bundle; the companions' views and the source checks read from it",
    abortable: false,
  },
  targetCopiesExport: {
    startedAt: 'records, from the earlier migrations’ records',
    consumer: 'itself',
    takenAt: 'read ahead',
    feeds: "the plans' comparison with the copies already in the target",
    abortable: false,
  },
  readsOnExport: {
    startedAt: 'records',
    consumer: 'itself',
    takenAt: 'plan',
    feeds: "begins `sourceViews` or `sourceDashboardRows` (a rerun or a dry run: the copy kinds' reads too) once the export is answered",
    abortable: false,
  },
  sourceViews: {
    startedAt: 'records (once the export is answered), plan, import',
    consumer: 'itself',
    takenAt: 'plan; the companions after the import',
    feeds: "the companions' comparisons; the source checks' chart lists and uuids",
    abortable: false,
  },
  sourceDashboardRows: {
    startedAt: 'records, plan',
    consumer: 'itself',
    takenAt: 'plan',
    feeds: "the roles kind's comparison before the import",
    abortable: false,
  },
  embeddedConfigurations: {
    startedAt: 'import, as it is sent (a rerun or a dry run: records)',
    consumer: 'itself',
    takenAt: 'the companions after the import',
    feeds: "the embedded kind's comparison",
    abortable: false,
  },
  environmentLists: {
    startedAt: 'import, as it is sent (a rerun or a dry run: records)',
    consumer: 'itself',
    takenAt: 'the companions after the import',
    feeds: "the copy kinds' comparisons: both sides' accounts, the source's reports and saved queries",
    abortable: false,
  },
  nextBatchExport: {
    startedAt: 'import, as it is sent',
    consumer: 'next batch',
    takenAt: 'records: its own export waits for it',
    feeds: "the next batch's plans (the source bundles it does not export again)",
    abortable: false,
  },
  nextBatchViews: {
    startedAt: 'import, once the next batch’s export is answered',
    consumer: 'next batch',
    takenAt: 'plan',
    feeds: "the next batch's companions' comparisons",
    abortable: false,
  },
  nextBatchEmbedded: {
    startedAt: 'import, once the next batch’s export is answered',
    consumer: 'next batch',
    takenAt: 'the companions after its import',
    feeds: "the next batch's embedded kind's comparison",
    abortable: false,
  },
  sourceChecks: {
    startedAt: 'import, as it is sent',
    consumer: 'verification',
    takenAt: "each dashboard's verification",
    feeds: "the source side of the verification: each dashboard's charts, their passing checks kept by the worker",
    abortable: true,
    hands: ['sourceCharts'],
  },
  targetChecks: {
    startedAt: "import, once the imports and their companions' writes are done",
    consumer: 'verification',
    takenAt: "recording the target's state (the export); each dashboard's verification (the checks)",
    feeds: "the target side of the verification: the target's export after the writes, each chart's check",
    abortable: true,
    hands: ['targetChecks', 'targetExport'],
  },
  unchangedSourceChecks: {
    startedAt: 'settle, plan (a rerun’s unchanged dashboards)',
    consumer: 'verification',
    takenAt: "each dashboard's verification",
    feeds: "the source side of an unchanged dashboard's check again",
    abortable: true,
    hands: ['sourceCharts'],
  },
  unchangedTargetChecks: {
    startedAt: 'settle, plan (a rerun’s unchanged dashboards)',
    consumer: 'verification',
    takenAt: "each dashboard's verification",
    feeds: "the target side of an unchanged dashboard's check again (fresh answers)",
    abortable: true,
    hands: ['targetChecks', 'targetExport'],
  },
} as const satisfies Record<string, PrefetchRead>;

/** A read the plan declares: nothing else can be started ahead. */
export type PrefetchName = keyof typeof PREFETCH_PLAN;

/** The names the checks begun ahead of the verification are started under: a source's, a target's. */
export type SourceChecksName = 'sourceChecks' | 'unchangedSourceChecks';
export type TargetChecksName = 'targetChecks' | 'unchangedTargetChecks';

/** How long a task's plan is kept on a worker that no longer hears of the task. */
export const PREFETCH_IDLE_MS = 30 * 60_000;

const CONSUMERS: Record<Consumer, string> = { itself: 'the batch', 'next batch': 'the next batch', verification: 'the verification' };

/** When a read is settled: as its taker ends, or as the task ends when nobody took it. */
function settledWhen(r: PrefetchRead): string {
  if (r.consumer === 'itself') return 'awaited as the batch ends';
  return `awaited as its taker ends; if never taken, ${r.abortable ? 'aborted and awaited' : 'awaited'} as the task ends`;
}

/** The plan as the Markdown table docs/migration-batching.md holds (checked by its docs test). */
export function prefetchPlanTable(): string {
  const rows = Object.entries(PREFETCH_PLAN).map(([name, r]: [string, PrefetchRead]) =>
    [`\`${name}\``, r.startedAt, `${CONSUMERS[r.consumer]}: ${r.takenAt}`, r.feeds, settledWhen(r)].join(' | '),
  );
  return [
    '| Read | Started by the batch at | Taken by | Feeds | Settled |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}
