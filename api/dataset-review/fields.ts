/** Semantic fields from a dataset: one per column and metric, with ranked candidates and the best as the proposed meaning. */
import type { FieldRow, NewField } from '../../db/dataset-review/fields.ts';
import type { SuggestionRow } from '../../db/datasets/suggestions.ts';
import { rankCandidates, type Candidate, type RankingContext } from '../../lib/dataset-review/ranking.ts';
import type { DictionaryEntry } from '../../lib/dictionary/entries.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';

export function acceptedByColumn(rows: SuggestionRow[]): RankingContext['accepted'] {
  const out: RankingContext['accepted'] = new Map();
  for (const r of rows) {
    if (!r.column_name) continue;
    const held = out.get(r.column_name) ?? { suggestion_ids: [] };
    const value = r.accepted_value ?? r.value;
    // Newest first: the first accepted value of a field wins.
    if (r.field === 'verbose_name' && held.verbose_name === undefined) held.verbose_name = value;
    if (r.field === 'description' && held.description === undefined) held.description = value;
    held.suggestion_ids.push(r.id);
    out.set(r.column_name, held);
  }
  return out;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

export function fieldInputs(detail: DatasetDetail) {
  return [
    ...detail.columns.map((c) => ({
      kind: 'column' as const,
      name: c.column_name,
      superset: { verbose_name: text(c.verbose_name), description: text(c.description), type: text((c as { type?: unknown }).type) },
    })),
    ...detail.metrics.map((m) => ({
      kind: 'metric' as const,
      name: m.metric_name,
      superset: { verbose_name: text(m.verbose_name), description: text(m.description), type: null },
    })),
  ];
}

export function proposeFields(detail: DatasetDetail, ctx: RankingContext): NewField[] {
  return fieldInputs(detail).map((f, position) => {
    const candidates = rankCandidates(f, ctx);
    const best = candidates[0];
    return {
      kind: f.kind,
      name: f.name,
      position,
      label: best?.label ?? null,
      description: best?.description ?? null,
      provenance: best?.provenance ?? 'unresolved',
      status: best ? 'proposed' : 'unresolved',
      source: best ? { ...best.source, score: best.score } : null,
      candidates,
      superset: f.superset,
    };
  });
}

/** What a new dictionary version means for a field: a locked value is kept; an unlocked one needs review beside the new candidate. */
export function rerank(field: FieldRow, dictionary: { id: string; version: number; entries: DictionaryEntry[] }, table: string | null) {
  const candidates = rankCandidates(
    {
      kind: field.kind,
      name: field.name,
      superset: { verbose_name: field.superset.verbose_name, description: field.superset.description },
    },
    { table, dictionary, accepted: new Map() },
  );
  // Keep the LLM candidates already found (the store is not read again here).
  const merged: Candidate[] = [
    ...candidates.filter((c) => c.provenance !== 'llm'),
    ...field.candidates.filter((c) => c.provenance === 'llm'),
  ];
  if (field.locked) return { candidates: merged };
  return { candidates: merged, status: 'needs_review' as const, pending_candidate: merged[0] ?? null };
}
