/**
 * A batch's reads ahead of its plans: the source's export of all its dashboards in one call, the
 * target's copies of those already there in one more, the source's databases and the slugs that
 * changed hands in the target, so planning a dashboard costs no call of its own. Whatever cannot
 * be read ahead is read per dashboard, which then fails alone with its cause.
 */
import type { MigrationBatchInput } from '../../contracts/migration.ts';
import type { TargetState } from '../../db/dashboard-migration/store.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import { fallbackLogged } from '../../lib/detached.ts';
import { maxBundleBytes } from './deps.ts';
import type { BatchContext, EarlyReads } from './batch-context.ts';
import { readSourceEmbeddedEarly, readSourceViewsAhead } from './companions/early-reads.ts';
import type { BatchDashboard, Log, MigrationServices, PlanScope, Upstreams } from './context.ts';
import type { PlanAhead } from './plan.ts';
import { upstreamFor } from './superset-upstream.ts';

/** What a batch read ahead, per source dashboard (undefined: the dashboard is read by its own plan). */
export interface ReadAhead {
  for(id: number): PlanAhead | undefined;
}

const nothingAhead: ReadAhead = { for: () => undefined };

/**
 * The reads a batch starts at once, beside the indexes' reads (they need none of them): the
 * source's export of the dashboards this worker has not read yet (an earlier batch of the task
 * may have read and left some, MigrationCaches.exportedSources), and the target's export of the
 * copies an earlier migration brought there (their ids are in its records), so a rerun reads
 * both sides at once instead of the target's after its index. Only when several dashboards (or
 * a rerun's) are read together.
 */
export function startReads(
  ctx: Pick<BatchContext, 'svc' | 'input' | 'taskId' | 'prefetch'>,
  todo: BatchDashboard[],
  records: Map<number, TargetState>,
  at: { started: number; rerun: boolean },
): EarlyReads {
  const { svc, input, taskId, prefetch } = ctx;
  const readTogether = todo.length >= 2 || at.rerun;
  const ids = todo.map((d) => d.id);
  // An earlier batch of the task may be exporting some of them ahead (exportUpcoming): taken from it, once it has.
  // Kept in the worker's cache as it lands: the companions' views are read from it from then on (batch.ts openBatch).
  // readAhead awaits it (and falls back to exporting each dashboard alone); the plan logs its failure.
  const sourceExport = readTogether
    ? prefetch.start('sourceExport', `the source's export of dashboards ${ids.join(', ')}`, async () => {
        await prefetch.adopt('nextBatchExport');
        const unread = ids.filter((id) => !svc.caches.exportedSources.get(taskId, id));
        if (!unread.length) return null;
        const zip = await (await upstreamFor(svc.deps, input.sourceEnvId)).exportDashboards(unread);
        keepSourceExport({ svc, taskId }, zip);
        return zip;
      })
    : Promise.resolve(null);
  const recordedTargets = new Map([...records].map(([id, r]) => [id, r.target_dashboard_id]));
  // The same: readAhead awaits it, and exports the target's copies itself when it failed.
  const targetExport = readTogether
    ? prefetch.start('targetCopiesExport', `the target's copies of dashboards ${ids.join(', ')}`, () =>
        earlyTargetExport(svc, input, recordedTargets, at.rerun ? 1 : 2),
      )
    : Promise.resolve(null);
  return { at: at.started, sourceExport, recordedTargets, targetExport };
}

/**
 * The target's copies of a batch's source dashboards, as the last migrations recorded them,
 * exported in one call before the target's index is read: the ids exported, and the zip. Null
 * when fewer than `least` are recorded (a lone one is read by its own plan, except in a rerun).
 * A recorded id that is gone fails the call; readAhead then exports the ones the index knows.
 */
async function earlyTargetExport(
  svc: MigrationServices,
  input: MigrationBatchInput,
  recordedTargets: Map<number, number>,
  least: number,
): Promise<{ ids: number[]; zip: Uint8Array } | null> {
  const ids = [...new Set(recordedTargets.values())];
  if (!ids.length || ids.length < least) return null;
  return { ids, zip: await (await upstreamFor(svc.deps, input.targetEnvId)).exportDashboards(ids) };
}

/**
 * Begins exporting the dashboards the next batch will read first (`upcoming`, those this worker
 * has not read yet) and keeps them in the worker's cache of source exports when read, then begins
 * reading their companions' views from that export, and their embedded configurations, under the
 * task's source snapshot: called as the batch imports, when the source has nothing else to
 * answer, so the next batch on this worker finds them read. Never fails the batch: the next batch
 * reads what is not there.
 */
export function exportUpcoming(ctx: BatchContext, scope: PlanScope): void {
  const { svc, input, taskId, prefetch } = ctx;
  const ids = (input.upcoming ?? []).filter((id) => !svc.caches.exportedSources.get(taskId, id));
  if (ids.length < 2) return; // a lone dashboard is read by its own plan
  // Handed to the next batch on this worker, which takes what landed and reads the rest itself.
  prefetch.begin('nextBatchExport', `the next batch's source export of dashboards ${ids.join(', ')}`, async () => {
    const zip = await (await upstreamFor(svc.deps, input.sourceEnvId)).exportDashboards(ids);
    keepSourceExport(ctx, zip);
    // The next batch's comparisons read their views from the export (this read settles once they are begun).
    const views = readSourceViewsAhead(prefetch, scope, ids, (id) => svc.caches.exportedSources.get(taskId, id), 'nextBatchViews');
    // And what the next batch's copy kinds compare after its import: read here, the next batch waits for none of it.
    readSourceEmbeddedEarly(prefetch, scope, ids, 'nextBatchEmbedded');
    await views;
  });
}

/** The source's export (once it is read) into the worker's cache of source exports, where each dashboard is taken from. */
export function keepSourceExport(ctx: Pick<BatchContext, 'svc' | 'taskId'>, zip: Uint8Array | null): void {
  if (!zip) return;
  for (const [id, b] of splitByDashboard(Bundle.fromZip(zip, maxBundleBytes(ctx.svc.deps))))
    ctx.svc.caches.exportedSources.put(ctx.taskId, id, b);
}

/**
 * Reads a batch ahead (`ids`: the dashboards to plan): the source's export and databases, and
 * side by side the target's copies of those already there and the slugs that changed hands
 * there since the index was read, split per dashboard.
 */
export async function readAhead(ctx: BatchContext, up: Upstreams, ids: number[]): Promise<ReadAhead> {
  const { log, reads } = ctx;
  if (ids.length < 2) return nothingAhead;
  // The slugs that changed hands in the target since the index was read (one call; where the
  // release cannot say, each slug is asked of the target). A refresh that fails is "cannot tell"
  // too. None when this batch built the index: it is as current as a refresh would make it.
  const slugsRead = fallbackLogged("the target's changed slugs", up.index.refreshDashboardsChanged(100, reads.at), false, log);
  // The target's copies of the dashboards an earlier migration brought there (known from its records).
  const targetCopies = new Map<number, Bundle>();
  const recorded = () => [...new Set(reads.recordedTargets.values())].filter((id) => up.index.hasDashboard(id));
  const early = fallbackLogged("the target's early export", reads.targetExport, null, log); // if failed, exported now
  const targetsRead = early.then((got) => exportTargets(ctx, up, targetCopies, recorded(), got));
  let sources: Map<number, Bundle>;
  let sourceDatabases: PlanAhead['sourceDatabases'];
  try {
    ({ sources, sourceDatabases } = await readSources(ctx, up, ids));
  } catch (err) {
    await Promise.all([slugsRead, targetsRead]);
    log.warn(
      `the ${ids.length} dashboards could not be exported together (${(err as Error).message.slice(0, 200)}): each is exported alone`,
    );
    return nothingAhead;
  }
  const [slugsCurrent] = await Promise.all([slugsRead, targetsRead]);
  // Copies the records did not predict (migrated by hand, or records from before they kept the source id): read now.
  const existing = new Map<number, number>();
  for (const [id, b] of sources) {
    const uuid = b.of('dashboards')[0]?.content.uuid;
    const there = typeof uuid === 'string' ? await up.index.dashboard(uuid) : null;
    if (there) existing.set(id, there.id);
  }
  await exportTargets(
    ctx,
    up,
    targetCopies,
    [...existing.values()].filter((targetId) => !targetCopies.has(targetId)),
  );
  return {
    for: (id: number) => {
      const bundle = sources.get(id);
      if (!bundle) return undefined;
      return {
        bundle,
        sourceDatabases,
        targetExport: (targetId: number) => targetCopies.get(targetId),
        // The target dashboard holding the slug, as the index knows it (current as of this batch).
        slugOwner: slugsCurrent
          ? async (slug: string) => {
              const owner = up.index.dashboardBySlug(slug);
              return owner ? { id: owner.id, uuid: owner.uuid, dashboard_title: owner.title } : null;
            }
          : undefined,
      };
    },
  };
}

/** The batch's source bundles (each a copy of the one the worker keeps) and the source's databases they name. */
async function readSources(ctx: BatchContext, up: Upstreams, ids: number[]) {
  await ctx.reads.sourceExport; // kept in the worker's cache as it landed (startReads)
  const sources = new Map<number, Bundle>();
  for (const id of ids) {
    const b = ctx.svc.caches.exportedSources.get(ctx.taskId, id);
    if (b) sources.set(id, b.clone());
  }
  // The source index read them at the task's start; read again only for one created since.
  const bundled = [...sources.values()]
    .flatMap((b) => b.of('databases').map((f) => f.content.uuid))
    .filter((u): u is string => typeof u === 'string');
  return { sources, sourceDatabases: [...(await up.sourceIndex.databasesCovering(bundled))] };
}

/**
 * The target's copies with these ids, exported together into `into` (one is read by its own
 * plan). The early export serves when it holds every copy the index knows of (a copy gone since
 * failed it, or the records changed): otherwise those copies are exported now.
 */
async function exportTargets(
  ctx: { svc: MigrationServices; log: Log },
  up: Upstreams,
  into: Map<number, Bundle>,
  targetIds: number[],
  early?: { ids: number[]; zip: Uint8Array } | null,
): Promise<void> {
  if (targetIds.length < 2) return;
  try {
    const zip = early && targetIds.every((id) => early.ids.includes(id)) ? early.zip : await up.target.exportDashboards(targetIds);
    for (const [id, b] of splitByDashboard(Bundle.fromZip(zip, maxBundleBytes(ctx.svc.deps)))) if (targetIds.includes(id)) into.set(id, b);
  } catch (err) {
    ctx.log.warn(`the target's copies could not be exported together (${(err as Error).message.slice(0, 200)}): each is exported alone`);
  }
}
