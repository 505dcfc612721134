/**
 * The one current question of a review: the first thing that blocks it and has no answer yet, in
 * this order: which dataset (several behind the dashboard), which variable an unmapped filter
 * fills, whether to take a new dictionary candidate, what an unresolved field means.
 */
import type { ClarificationRow } from '../../db/dataset-review/clarifications.ts';
import type { FieldRow } from '../../db/dataset-review/fields.ts';
import type { MappingRow } from '../../db/dataset-review/mappings.ts';
import type { SessionRow } from '../../db/dataset-review/sessions.ts';

export interface Question {
  key: string;
  kind: 'dataset_choice' | 'filter_mapping' | 'field_review' | 'field_meaning';
  text: string;
  options: Array<{ value: string; label: string }>;
  /** What the question is about (a field or mapping id, a filter id). */
  ref: string | null;
}

export function questions(s: SessionRow, fields: FieldRow[], mappings: MappingRow[], answered: ClarificationRow[]): Question[] {
  const done = new Set(answered.map((a) => a.question_key));
  const out: Question[] = [];
  if (!s.dataset && s.candidate_datasets.length > 1) {
    out.push({
      key: 'dataset_choice',
      kind: 'dataset_choice',
      text: `The dashboard shows ${s.candidate_datasets.length} datasets. Which one is reviewed?`,
      options: s.candidate_datasets.map((d) => ({
        value: String(d.id),
        label: `${d.table_name ?? `dataset ${d.id}`} (charts ${d.charts.join(', ')})`,
      })),
      ref: null,
    });
  }
  const mappedVariables = new Set(mappings.map((m) => m.variable).filter(Boolean));
  const free = s.template_variables.filter((v) => !mappedVariables.has(v.name));
  for (const m of mappings) {
    const f = s.imported_filters.find((x) => x.id === m.filter_id);
    if (!f || m.variable || !free.length) continue;
    out.push({
      key: `filter_mapping:${f.id}`,
      kind: 'filter_mapping',
      text: `Filter '${f.name}'${f.column ? ` (column ${f.column})` : ''} fills no template variable. Which one should it fill?`,
      options: [
        ...free.map((v) => ({ value: `${v.kind}:${v.name}`, label: `${v.name} (${v.kind})` })),
        { value: 'none', label: 'none: it only filters' },
      ],
      ref: m.id,
    });
  }
  for (const f of fields) {
    if (f.status === 'needs_review') {
      const c = f.pending_candidate;
      out.push({
        key: `field_review:${f.id}:${s.dictionary_version ?? 0}`,
        kind: 'field_review',
        text: `The dictionary changed. ${f.kind} '${f.name}' holds "${f.label ?? ''}" / "${f.description ?? ''}"; the new candidate is ${c ? `"${c.label ?? ''}" / "${c.description ?? ''}" (${c.provenance})` : 'none'}. Take it?`,
        options: [
          ...(c ? [{ value: 'accept_candidate', label: 'take the new candidate' }] : []),
          { value: 'keep_current', label: 'keep the current value' },
        ],
        ref: f.id,
      });
    } else if (f.status === 'unresolved') {
      out.push({
        key: `field_meaning:${f.id}`,
        kind: 'field_meaning',
        text: `What does ${f.kind} '${f.name}' mean? Nothing in the dictionary, Superset or accepted suggestions says.`,
        options: [
          { value: 'set', label: 'give a label and/or description' },
          { value: 'skip', label: 'leave it unresolved' },
        ],
        ref: f.id,
      });
    }
  }
  return out.filter((q) => !done.has(q.key));
}
