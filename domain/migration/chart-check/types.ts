/** What the chart check reads of a chart, and what one check answers. */
import type { ChartCheckMethod, ChartClassification } from '../../../contracts/migration.ts';

/** A chart of a dashboard as the check reads it in one environment. */
export interface ChartForCheck {
  id: number;
  uuid: string | null;
  name: string;
  viz_type: string;
  form_data: Record<string, unknown>;
  /** The chart's dataset in this environment. */
  datasource: { id: number; type: string } | null;
  /** The saved query context, parsed (null when the chart has none). */
  query_context: Record<string, unknown> | null;
}

/** The columns an answer returned (metrics are columns too), with Superset's generic type when it gave one. */
export interface AnswerColumn {
  name: string;
  type: number | null;
}

/** One environment's answer to a chart's check: it ran (with its columns), it failed (Superset's message), or there was no faithful check. */
export type ChartAnswer = { ok: true; rows: number; columns: AnswerColumn[] } | { ok: false; error: string } | { unverifiable: string };

/** How a chart is checked in one environment. */
export type CheckPlan =
  | { method: 'saved_query_context' | 'form_data'; queryContext: Record<string, unknown> }
  | { method: 'legacy_api'; chartId: number }
  | { method: null; reason: string };

/** A chart's check in one environment: how, and its answer. */
export interface ChartCheck {
  method: ChartCheckMethod | null;
  answer: ChartAnswer;
  /** Its query names the answer's columns by values of the data (a pivot by series columns, histogram bins): they are not compared by name. */
  columnsFromData?: boolean;
}

/** A chart's verdict from its checks in the source and the target, and why when it is not plain. */
export interface Classified {
  classification: ChartClassification;
  reason?: string;
}
