/**
 * Charts' checks in one environment: each planned by the decider (./decide.ts), run through the
 * upstream. The queries of charts on one dataset go out together in chart-data calls of at most
 * MAX_QUERIES_PER_CALL queries where the upstream can (each chart still gets the answer it would
 * get alone: ./superset.ts runQueryContexts), whichever dashboards the charts come from.
 */
import { canonicalJson } from '../../../lib/bundles/bundle.ts';
import type { MigrationUpstream } from '../upstream.ts';
import { planCheck } from './decide.ts';
import { inParallel } from './parallel.ts';
import type { ChartCheck, ChartForCheck, CheckPlan } from './types.ts';

/**
 * Most queries one chart-data call carries. Superset runs a call's queries one after another on
 * one of its threads: a batch's charts on one dataset in calls of this many keep its per-call cost
 * (sign-in check, dataset and permission loads, the answer) shared, while several calls can still
 * run at once within the environment's bound (./limit.ts), and one refused call (then each of its
 * charts asked alone) stays small.
 */
export const MAX_QUERIES_PER_CALL = 8;

export async function runCheck(up: MigrationUpstream, chart: ChartForCheck, release: string | null): Promise<ChartCheck> {
  const plan = planCheck(chart, release);
  return marked(await runPlan(up, plan), plan);
}

/** Every chart's check, in order, with at most `parallelism` calls of this list at once. */
export async function runChecks(
  up: MigrationUpstream,
  charts: ChartForCheck[],
  release: string | null,
  parallelism: number,
): Promise<ChartCheck[]> {
  const plans = charts.map((c) => planCheck(c, release));
  const out: ChartCheck[] = new Array(charts.length);
  for (const [i, p] of plans.entries()) if (p.method === null) out[i] = { method: null, answer: { unverifiable: p.reason } };
  const { units, twins } = unitsOf(plans, !!up.runQueryContexts);
  await inParallel(units, parallelism, async (unit) => {
    if (unit.length > 1) {
      const answers = await up.runQueryContexts!(unit.map((i) => (plans[i] as Extract<CheckPlan, { queryContext: unknown }>).queryContext));
      if (answers) {
        for (const [k, i] of unit.entries()) out[i] = { method: plans[i]!.method, answer: answers[k]! };
        return;
      }
    }
    // Alone, or the joint call gave no answers to read: each chart asked on its own.
    for (const i of unit) out[i] = await runPlan(up, plans[i]!);
  });
  for (const [i, first] of twins) out[i] = { method: plans[i]!.method, answer: structuredClone(out[first]!.answer) };
  return out.map((c, i) => marked(c, plans[i]!));
}

/**
 * The calls the plans need: a legacy-API chart alone; charts whose query contexts share a dataset
 * together, up to MAX_QUERIES_PER_CALL queries a call (`joint`: the upstream can send several at
 * once). A chart whose query context asks exactly what an earlier one's asks (the same dataset
 * and queries: a copied chart, a dashboard's twin) is not sent again: it is that chart's twin and
 * gets its answer, as Superset would give it the same one.
 */
function unitsOf(plans: CheckPlan[], joint: boolean): { units: number[][]; twins: Map<number, number> } {
  const units: number[][] = [];
  const twins = new Map<number, number>();
  const asked = new Map<string, number>();
  const byDataset = new Map<string, { unit: number[]; queries: number }>();
  for (const [i, p] of plans.entries()) {
    if (p.method === null) continue;
    if (p.method === 'legacy_api' || !joint) {
      units.push([i]);
      continue;
    }
    const { datasource, queries, result_type, result_format } = p.queryContext;
    const same = canonicalJson([datasource, queries, result_type ?? null, result_format ?? null]);
    const first = asked.get(same);
    if (first !== undefined) {
      twins.set(i, first);
      continue;
    }
    asked.set(same, i);
    const key = JSON.stringify(datasource);
    const count = Array.isArray(queries) ? queries.length : 1;
    const open = byDataset.get(key);
    if (open && open.queries + count <= MAX_QUERIES_PER_CALL) {
      open.unit.push(i);
      open.queries += count;
    } else {
      byDataset.set(key, { unit: [i], queries: count });
      units.push(byDataset.get(key)!.unit);
    }
  }
  return { units, twins };
}

async function runPlan(up: MigrationUpstream, plan: CheckPlan): Promise<ChartCheck> {
  if (plan.method === null) return { method: null, answer: { unverifiable: plan.reason } };
  if (plan.method === 'legacy_api') return { method: plan.method, answer: await up.runLegacyChart(plan.chartId) };
  return { method: plan.method, answer: await up.runQueryContext(plan.queryContext) };
}

/** A check whose query names its answer's columns by values of the data, marked so (./comparable.ts then compares no names). */
function marked(check: ChartCheck, plan: CheckPlan): ChartCheck {
  return 'queryContext' in plan && columnsFromData(plan.queryContext) ? { ...check, columnsFromData: true } : check;
}

/**
 * Whether a query's post-processing names columns by values of the data: a pivot by series
 * columns (one column per metric and series value) or histogram bins (one per bin range). Two
 * environments' answers to such a query have different columns whenever their data differ.
 */
export function columnsFromData(queryContext: Record<string, unknown>): boolean {
  const queries = Array.isArray(queryContext.queries) ? (queryContext.queries as Array<Record<string, unknown>>) : [];
  return queries.some((q) =>
    (Array.isArray(q?.post_processing) ? (q.post_processing as Array<Record<string, unknown> | null>) : []).some((op) => {
      const options = (op?.options ?? {}) as Record<string, unknown>;
      return op?.operation === 'histogram' || (op?.operation === 'pivot' && Array.isArray(options.columns) && options.columns.length > 0);
    }),
  );
}
