/**
 * Charts' checks in one environment: each planned by the decider (./decide.ts), run through the
 * upstream. The queries of charts on one dataset go out together in chart-data calls of at most
 * MAX_QUERIES_PER_CALL queries where the upstream can (each chart still gets the answer it would
 * get alone: ./superset.ts runQueryContexts), whichever dashboards the charts come from.
 */
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
  return runPlan(up, planCheck(chart, release));
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
  // Units of work: a chart alone, or charts whose query contexts share a dataset, up to MAX_QUERIES_PER_CALL queries.
  const units: number[][] = [];
  const byDataset = new Map<string, { unit: number[]; queries: number }>();
  for (const [i, p] of plans.entries()) {
    if (p.method === null) out[i] = { method: null, answer: { unverifiable: p.reason } };
    else if (p.method === 'legacy_api' || !up.runQueryContexts) units.push([i]);
    else {
      const key = JSON.stringify(p.queryContext.datasource);
      const queries = Array.isArray(p.queryContext.queries) ? p.queryContext.queries.length : 1;
      const open = byDataset.get(key);
      if (open && open.queries + queries <= MAX_QUERIES_PER_CALL) {
        open.unit.push(i);
        open.queries += queries;
      } else {
        byDataset.set(key, { unit: [i], queries });
        units.push(byDataset.get(key)!.unit);
      }
    }
  }
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
  return out;
}

async function runPlan(up: MigrationUpstream, plan: CheckPlan): Promise<ChartCheck> {
  if (plan.method === null) return { method: null, answer: { unverifiable: plan.reason } };
  if (plan.method === 'legacy_api') return { method: plan.method, answer: await up.runLegacyChart(plan.chartId) };
  return { method: plan.method, answer: await up.runQueryContext(plan.queryContext) };
}
