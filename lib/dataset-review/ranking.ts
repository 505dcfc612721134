/**
 * Candidate meanings for a dataset field, best first: an exact name match in the trusted
 * dictionary, then fuzzy name matches (Levenshtein similarity of normalised names), then what
 * Superset already holds, then accepted LLM suggestions. A field with none stays unresolved.
 */
import { distance } from 'fastest-levenshtein';
import type { DictionaryEntry } from '../dictionary/entries.ts';

export type Provenance = 'dictionary' | 'fuzzy' | 'superset' | 'llm' | 'manual' | 'unresolved';

export interface Candidate {
  provenance: Exclude<Provenance, 'manual' | 'unresolved'>;
  label: string | null;
  description: string | null;
  /** 1 for exact matches; the similarity for fuzzy ones. */
  score: number;
  source: Record<string, unknown>;
}

export interface FieldInput {
  kind: 'column' | 'metric';
  name: string;
  superset: { verbose_name: string | null; description: string | null };
}

export interface RankingContext {
  table: string | null;
  dictionary: { id: string; version: number; entries: DictionaryEntry[] } | null;
  /** Accepted LLM suggestions of the dataset's columns: column name → field → value. */
  accepted: Map<string, { verbose_name?: string; description?: string; suggestion_ids: string[] }>;
}

/** Least similarity (1 - distance / longer length) for a fuzzy candidate. */
export const FUZZY_THRESHOLD = 0.75;
const RANK: Record<Candidate['provenance'], number> = { dictionary: 0, fuzzy: 1, superset: 2, llm: 3 };

export const normaliseName = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');

export function similarity(a: string, b: string): number {
  const x = normaliseName(a);
  const y = normaliseName(b);
  if (!x || !y) return 0;
  return 1 - distance(x, y) / Math.max(x.length, y.length);
}

export function rankCandidates(field: FieldInput, ctx: RankingContext): Candidate[] {
  const out: Candidate[] = [];
  const table = ctx.table ? ctx.table.trim().toLowerCase() : null;
  const entries = (ctx.dictionary?.entries ?? []).filter((e) => e.table_name === null || e.table_name.trim().toLowerCase() === table);
  const dict = ctx.dictionary;
  const exact = entries
    .filter((e) => e.column_name.trim().toLowerCase() === field.name.trim().toLowerCase())
    .sort((a, b) => (a.table_name ? 0 : 1) - (b.table_name ? 0 : 1))[0];
  if (exact && dict) {
    out.push({
      provenance: 'dictionary',
      label: exact.verbose_name,
      description: exact.description,
      score: 1,
      source: { dictionary_id: dict.id, dictionary_version: dict.version, entry: exact.column_name },
    });
  }
  if (dict) {
    const fuzzy = entries
      .filter((e) => e !== exact)
      .map((e) => ({ e, s: similarity(e.column_name, field.name) }))
      .filter((x) => x.s >= FUZZY_THRESHOLD && normaliseName(x.e.column_name) !== normaliseName(exact?.column_name ?? '\u0000'))
      .sort((a, b) => b.s - a.s)
      .slice(0, 3);
    for (const { e, s } of fuzzy) {
      out.push({
        provenance: 'fuzzy',
        label: e.verbose_name,
        description: e.description,
        score: Math.round(s * 1000) / 1000,
        source: { dictionary_id: dict.id, dictionary_version: dict.version, entry: e.column_name },
      });
    }
  }
  if (field.superset.verbose_name || field.superset.description) {
    out.push({ provenance: 'superset', label: field.superset.verbose_name, description: field.superset.description, score: 1, source: {} });
  }
  const llm = field.kind === 'column' ? ctx.accepted.get(field.name) : undefined;
  if (llm && (llm.verbose_name || llm.description)) {
    out.push({
      provenance: 'llm',
      label: llm.verbose_name ?? null,
      description: llm.description ?? null,
      score: 1,
      source: { suggestion_ids: llm.suggestion_ids },
    });
  }
  return out.sort((a, b) => RANK[a.provenance] - RANK[b.provenance] || b.score - a.score);
}
