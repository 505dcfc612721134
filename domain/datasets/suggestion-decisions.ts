/**
 * Accepting LLM suggestions: which of them may be written (a field a person wrote, or one that
 * changed since the suggestion was made, is skipped unless its item says `overwrite`), then one
 * safe dataset write and the suggestions marked. Shared by the API (an unprotected environment:
 * at once) and the `dataset_change` task (a protected one: after another person's approval).
 */
import type { SupersetClient } from '../../lib/superset/client.ts';
import { sameValue, valueOf, type FieldEdit } from '../../lib/superset/dataset-edit.ts';
import { isPersonWritten, type DatasetChangeRow, type DatasetChangeStore } from '../../db/datasets/changes.ts';
import { writeDataset } from './safe-write.ts';
import type { SuggestionRow, SuggestionStore } from '../../db/datasets/suggestions.ts';

export interface AcceptItem {
  suggestion_id: string;
  value?: string;
  overwrite: boolean;
}

export interface Accepted {
  suggestion_id: string;
  target: 'dataset' | 'column';
  column_name: string | null;
  field: string;
  value: string;
  edited: boolean;
}

export interface Skipped {
  suggestion_id: string;
  reason: 'not_pending' | 'person_written' | 'changed_since' | 'no_such_column' | 'unknown';
  detail: string;
}

export type AcceptOutcome =
  | { status: 'done'; change: DatasetChangeRow | null; accepted: Accepted[]; skipped: Skipped[] }
  | { status: 'conflict'; differences: string[] };

export interface AcceptRequest {
  envId: string;
  datasetId: number;
  /** The listed suggestions, or every pending one. */
  items: AcceptItem[] | null;
  actor: { id: string | null; username: string | null };
}

type Detail = Awaited<ReturnType<SupersetClient['datasets']['get']>>;

/** Sorts each wanted suggestion into an edit or a skip with its reason. */
function decide(detail: Detail, rows: SuggestionRow[], req: AcceptRequest, lastWritten: Map<string, string | null>) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const wanted = req.items ?? rows.map((r) => ({ suggestion_id: r.id, value: undefined, overwrite: false }));
  const skipped: Skipped[] = [];
  const accepted: Accepted[] = [];
  const edits: FieldEdit[] = [];
  const taken = new Set<string>();
  const skip = (suggestion_id: string, reason: Skipped['reason'], detail: string) => skipped.push({ suggestion_id, reason, detail });
  for (const w of wanted) {
    const s = byId.get(w.suggestion_id);
    if (!s) {
      skip(w.suggestion_id, 'unknown', `no suggestion ${w.suggestion_id} for dataset ${req.datasetId} in this environment`);
      continue;
    }
    if (s.status !== 'pending') {
      skip(s.id, 'not_pending', `the suggestion is ${s.status}`);
      continue;
    }
    const ref = `${s.target}:${s.column_name ?? ''}:${s.field}`;
    if (taken.has(ref)) {
      skip(s.id, 'not_pending', 'another accepted suggestion in this request sets the same field');
      continue;
    }
    const current = valueOf(detail, s);
    if (current === undefined) {
      skip(s.id, 'no_such_column', `the dataset has no column '${s.column_name}' any more`);
      continue;
    }
    const value = w.value ?? s.value;
    if (!w.overwrite && !sameValue(current, s.base_value)) {
      skip(
        s.id,
        'changed_since',
        `the field changed in Superset after the suggestion was made (it holds ${JSON.stringify(current)}); accept with overwrite to replace it`,
      );
      continue;
    }
    if (!w.overwrite && isPersonWritten(current, s, lastWritten) && !sameValue(current, value)) {
      skip(s.id, 'person_written', `a person wrote the current value (${JSON.stringify(current)}); accept with overwrite to replace it`);
      continue;
    }
    taken.add(ref);
    edits.push({ target: s.target, column_name: s.column_name, field: s.field, value });
    accepted.push({
      suggestion_id: s.id,
      target: s.target,
      column_name: s.column_name,
      field: s.field,
      value,
      edited: w.value !== undefined && w.value !== s.value,
    });
  }
  return { edits, accepted, skipped };
}

/** Reads the dataset and the suggestions, writes what may be written in one safe update, and marks them accepted. */
export async function acceptSuggestions(
  client: SupersetClient,
  stores: { changes: DatasetChangeStore; suggestions: SuggestionStore },
  req: AcceptRequest,
): Promise<AcceptOutcome> {
  const detail = await client.datasets.get(req.datasetId);
  const rows = await stores.suggestions.forDecision(req.envId, req.datasetId, req.items ? req.items.map((i) => i.suggestion_id) : null);
  const lastWritten = await stores.changes.lastWritten(req.envId, req.datasetId);
  const { edits, accepted, skipped } = decide(detail, rows, req, lastWritten);
  if (!edits.length) return { status: 'done', change: null, accepted: [], skipped };
  const written = await writeDataset(client, stores.changes, {
    envId: req.envId,
    datasetId: req.datasetId,
    base: detail,
    edits,
    source: 'suggestions',
    actor: req.actor,
  });
  if (written.status === 'conflict') return { status: 'conflict', differences: written.differences };
  const change = written.status === 'applied' ? written.change : null;
  await stores.suggestions.markAccepted(
    accepted.map((a) => ({ id: a.suggestion_id, value: a.value })),
    req.actor,
    change?.id ?? null,
  );
  return { status: 'done', change, accepted, skipped };
}
