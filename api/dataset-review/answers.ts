/** The shapes a review session, its fields, mappings, clarification and dictionary versions are answered in. */
import type { ReviewClarificationStore } from '../../db/dataset-review/clarifications.ts';
import type { FieldRow, ReviewFieldStore } from '../../db/dataset-review/fields.ts';
import type { MappingRow, ReviewMappingStore } from '../../db/dataset-review/mappings.ts';
import type { SessionRow } from '../../db/dataset-review/sessions.ts';
import type { Transaction } from '../../db/stores.ts';
import type { Principal } from '../auth/principal.ts';
import { questions, type Question } from './clarification.ts';
import { previewForReader } from './preview.ts';

/** Who a change is recorded as (a field's updated_by, a dictionary version's creator). */
export const actor = (p: Principal): { id: string | null; username: string } => ({ id: p.userId, username: p.username });

/** What a review session's answers read besides the session itself. */
export type SessionParts = { fields: ReviewFieldStore; mappings: ReviewMappingStore; clarifications: ReviewClarificationStore };

/** A session as a list shows it. */
export function sessionSummary(s: SessionRow) {
  return {
    id: s.id,
    version: s.version,
    state: s.state,
    title: s.title,
    env_id: s.env_id,
    link: s.link,
    dashboard: s.dashboard,
    dataset: s.dataset ? { id: s.dataset.id, table_name: s.dataset.table_name } : null,
    recovery_markers: s.recovery_markers.length,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}

/** A session with its fields, mappings, clarification state and the preview as this reader may see it. */
export async function sessionView(parts: SessionParts, s: SessionRow, p: Principal, trx?: Transaction) {
  // One after another: inside a transaction they share one connection.
  const fields = await parts.fields.list(s.id, trx);
  const mappings = await parts.mappings.list(s.id, trx);
  const answered = await parts.clarifications.list(s.id, trx);
  const open = questions(s, fields, mappings, answered);
  return {
    id: s.id,
    version: s.version,
    state: s.state,
    title: s.title,
    note: s.note,
    owner: { id: s.owner_id, username: s.owner_username },
    env_id: s.env_id,
    link: s.link,
    link_kind: s.link_kind,
    dashboard: s.dashboard,
    dataset: s.dataset,
    candidate_datasets: s.candidate_datasets,
    charts: s.charts,
    imported_filters: s.imported_filters,
    template_variables: s.template_variables,
    recovery_markers: s.recovery_markers,
    fields: fields.map(fieldOut),
    mappings: mappings.map(mappingOut),
    clarification: { blocking: open.length > 0, current_question: open[0]?.key ?? null, remaining: open.length },
    dictionary: s.dictionary_id ? { id: s.dictionary_id, version: s.dictionary_version } : null,
    preview: previewForReader(p, s),
    launch: s.launch,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}

export function fieldOut(f: FieldRow) {
  return {
    id: f.id,
    kind: f.kind,
    name: f.name,
    label: f.label,
    description: f.description,
    provenance: f.provenance,
    status: f.status,
    locked: f.locked,
    source: f.source,
    candidates: f.candidates,
    pending_candidate: f.pending_candidate,
    superset: f.superset,
    updated_by: f.updated_by_username,
    updated_at: f.updated_at ? new Date(f.updated_at).toISOString() : null,
  };
}

export function mappingOut(m: MappingRow) {
  return {
    id: m.id,
    filter_id: m.filter_id,
    variable: m.variable,
    variable_kind: m.variable_kind,
    value: m.value ?? null,
    origin: m.origin,
    approved: m.approved,
    approved_at: m.approved_at ? new Date(m.approved_at).toISOString() : null,
  };
}

export function clarificationOut(s: SessionRow, open: Question[], answered: number) {
  return { session_id: s.id, version: s.version, blocking: open.length > 0, question: open[0] ?? null, remaining: open.length, answered };
}

export function versionOut(v: {
  id: string;
  dictionary_id: string;
  version: number;
  filename: string | null;
  format: string;
  sha256: string;
  entry_count: number;
  created_by_username: string | null;
  created_at: Date;
}) {
  return {
    id: v.id,
    dictionary_id: v.dictionary_id,
    version: v.version,
    filename: v.filename,
    format: v.format,
    sha256: v.sha256,
    entry_count: v.entry_count,
    created_by: v.created_by_username,
    created_at: new Date(v.created_at).toISOString(),
  };
}
