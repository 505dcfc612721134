/**
 * A report of a large task stays small: past the task answer's item limit (contracts/task-answer.ts,
 * the one decider) it leaves out its items, as the task answer does, and keeps of the per-item
 * diagnostics and next actions the first ones up to that limit, saying how many it left out. The
 * summary, the task-level diagnostics and next actions (one request retrying every failed item,
 * the log to read) are counted from every item and stay whole; the items endpoint pages the rest.
 */
import { ANSWER_ITEMS_LIMIT, carriesItems, itemsUrl, type OmittedItems } from '../../contracts/task-answer.ts';

interface Bounded {
  items: unknown[];
  diagnostics: Array<{ where: { item_id?: unknown } }>;
  next_actions: Array<{ item_id?: unknown }>;
}

export interface ReportOmissions extends OmittedItems {
  /** Diagnostics of single items left out (those of the first items are kept, up to the limit). */
  item_diagnostics_omitted: number;
  /** Next actions of single items left out (the task-level ones, such as retrying every failed item, stay). */
  item_next_actions_omitted: number;
}

/** The first `limit` entries about single items, every entry about the task; and how many were left out. */
function firstPerItem<T>(list: T[], itemOf: (entry: T) => unknown): { kept: T[]; omitted: number } {
  let seen = 0;
  const kept = list.filter((e) => {
    const item = itemOf(e);
    if (item === undefined || item === null) return true;
    return ++seen <= ANSWER_ITEMS_LIMIT;
  });
  return { kept, omitted: list.length - kept.length };
}

/** The report as its answer carries it: unchanged up to the limit, bounded beyond it. */
export function boundedReport<R extends Bounded & { task_id: string }>(report: R): R | (Omit<R, 'items'> & ReportOmissions) {
  if (carriesItems(report.items.length)) return report;
  const { items, ...rest } = report;
  const diagnostics = firstPerItem(report.diagnostics, (d) => d.where.item_id);
  const actions = firstPerItem(report.next_actions, (a) => a.item_id);
  return {
    ...rest,
    diagnostics: diagnostics.kept,
    next_actions: actions.kept,
    items_omitted: true,
    items_total: items.length,
    items_url: itemsUrl(report.task_id),
    item_diagnostics_omitted: diagnostics.omitted,
    item_next_actions_omitted: actions.omitted,
  };
}
