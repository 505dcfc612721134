/**
 * The `validation_verdicts` table, its one owner: what the content validator found of each
 * dashboard and chart of an environment the last time, so the next validation can say what broke
 * since (first seen broken) and when it last passed. A not_verifiable verdict proves nothing: it
 * changes neither the proven state nor its times.
 */
import type { Knex } from 'knex';
import type { ChartVerdict, VerdictHistory } from '../../contracts/validation.ts';

/** The row of the dashboard itself (Superset's ids start at 1). */
export const DASHBOARD_ROW = 0;

export interface VerdictToApply {
  /** A chart's id, or DASHBOARD_ROW for the dashboard's own verdict. */
  chartId: number;
  verdict: ChartVerdict;
}

interface VerdictRow {
  env_id: string;
  dashboard_id: number;
  chart_id: number;
  verdict: ChartVerdict;
  proven: 'passed' | 'broken' | null;
  first_seen_broken_at: Date | null;
  last_passed_at: Date | null;
  checked_at: Date;
  task_id: string | null;
}

export class ValidationVerdictStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /**
   * Applies one validation's verdicts of a dashboard (made at `at` by task `taskId`) and answers
   * each one's history by chart id. Rows of charts the dashboard no longer shows go. The same
   * task applying again (a retried activity) changes nothing it already changed.
   */
  async apply(
    envId: string,
    dashboardId: number,
    taskId: string,
    at: Date,
    verdicts: VerdictToApply[],
  ): Promise<Map<number, VerdictHistory>> {
    return this.knex.transaction(async (trx) => {
      const rows: VerdictRow[] = await trx('validation_verdicts')
        .where({ env_id: envId, dashboard_id: dashboardId })
        .forUpdate()
        .select('*');
      const before = new Map(rows.map((r) => [Number(r.chart_id), r]));
      const next = verdicts.map((v) =>
        nextRow(before.get(v.chartId), {
          env_id: envId,
          dashboard_id: dashboardId,
          chart_id: v.chartId,
          verdict: v.verdict,
          task_id: taskId,
          checked_at: at,
        }),
      );
      if (next.length)
        await trx('validation_verdicts')
          .insert(next)
          .onConflict(['env_id', 'dashboard_id', 'chart_id'])
          .merge(['verdict', 'proven', 'first_seen_broken_at', 'last_passed_at', 'checked_at', 'task_id']);
      const kept = verdicts.map((v) => v.chartId);
      await trx('validation_verdicts')
        .where({ env_id: envId, dashboard_id: dashboardId })
        .whereNotIn('chart_id', kept.length ? kept : [DASHBOARD_ROW])
        .delete();
      return new Map(next.map((r) => [r.chart_id, historyOf(r)]));
    });
  }

  /** The last validation's verdict of one dashboard of an environment, or null when none validated it. */
  async dashboard(
    envId: string,
    dashboardId: number,
  ): Promise<({ verdict: ChartVerdict; checked_at: string; task_id: string | null } & VerdictHistory) | null> {
    const r: VerdictRow | undefined = await this.knex('validation_verdicts')
      .where({ env_id: envId, dashboard_id: dashboardId, chart_id: DASHBOARD_ROW })
      .first();
    return r ? { verdict: r.verdict, checked_at: r.checked_at.toISOString(), task_id: r.task_id, ...historyOf(r) } : null;
  }

  /** Every stored verdict of an environment's dashboard rows, for reading (the console, tests). */
  async dashboards(envId: string): Promise<Array<{ dashboard_id: number; verdict: ChartVerdict; checked_at: string } & VerdictHistory>> {
    const rows: VerdictRow[] = await this.knex('validation_verdicts')
      .where({ env_id: envId, chart_id: DASHBOARD_ROW })
      .orderBy('dashboard_id');
    return rows.map((r) => ({
      dashboard_id: Number(r.dashboard_id),
      verdict: r.verdict,
      checked_at: r.checked_at.toISOString(),
      ...historyOf(r),
    }));
  }
}

/** The row after a verdict: the same task's verdict again keeps the row as that task left it. */
function nextRow(prev: VerdictRow | undefined, v: Omit<VerdictRow, 'proven' | 'first_seen_broken_at' | 'last_passed_at'>): VerdictRow {
  if (prev && prev.task_id === v.task_id) return prev;
  const kept = {
    proven: prev?.proven ?? null,
    first_seen_broken_at: prev?.first_seen_broken_at ?? null,
    last_passed_at: prev?.last_passed_at ?? null,
  };
  if (v.verdict === 'passed') return { ...v, proven: 'passed', first_seen_broken_at: null, last_passed_at: v.checked_at };
  if (v.verdict === 'broken')
    return {
      ...v,
      ...kept,
      proven: 'broken',
      first_seen_broken_at: prev?.proven === 'broken' && prev.first_seen_broken_at ? prev.first_seen_broken_at : v.checked_at,
    };
  return { ...v, ...kept };
}

/** Newly broken: the broken run began with the verdict this row holds. */
function historyOf(r: VerdictRow): VerdictHistory {
  const first = r.first_seen_broken_at;
  return {
    first_seen_broken_at: r.proven === 'broken' && first ? new Date(first).toISOString() : null,
    last_passed_at: r.last_passed_at ? new Date(r.last_passed_at).toISOString() : null,
    newly_broken: r.verdict === 'broken' && !!first && new Date(first).getTime() === new Date(r.checked_at).getTime(),
  };
}
