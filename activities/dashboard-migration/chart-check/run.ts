/** One chart's check in one environment: planned by the decider (./decide.ts), run through the upstream. */
import type { MigrationUpstream } from '../upstream.ts';
import { planCheck } from './decide.ts';
import type { ChartCheck, ChartForCheck } from './types.ts';

export async function runCheck(up: MigrationUpstream, chart: ChartForCheck, release: string | null): Promise<ChartCheck> {
  const plan = planCheck(chart, release);
  if (plan.method === null) return { method: null, answer: { unverifiable: plan.reason } };
  if (plan.method === 'legacy_api') return { method: plan.method, answer: await up.runLegacyChart(plan.chartId) };
  return { method: plan.method, answer: await up.runQueryContext(plan.queryContext) };
}
