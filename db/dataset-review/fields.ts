import type { Knex } from 'knex';
import type { Candidate, Provenance } from '../../lib/dataset-review/ranking.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';

export type FieldStatus = 'proposed' | 'unresolved' | 'needs_review' | 'manual';

export interface FieldRow {
  id: string;
  session_id: string;
  kind: 'column' | 'metric';
  name: string;
  position: number;
  label: string | null;
  description: string | null;
  provenance: Provenance;
  status: FieldStatus;
  locked: boolean;
  source: Record<string, unknown> | null;
  candidates: Candidate[];
  pending_candidate: Candidate | null;
  superset: { verbose_name: string | null; description: string | null; type: string | null };
  updated_by: string | null;
  updated_by_username: string | null;
  updated_at: Date | null;
}

export type NewField = Pick<
  FieldRow,
  'kind' | 'name' | 'position' | 'label' | 'description' | 'provenance' | 'status' | 'source' | 'candidates' | 'superset'
>;

export interface FeedbackRow {
  id: string;
  session_id: string;
  field_id: string;
  verdict: 'useful' | 'wrong';
  comment: string | null;
  value_at_feedback: { label: string | null; description: string | null; provenance: string };
  user_id: string | null;
  username: string;
  created_at: Date;
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** `review_fields` and `review_field_feedback`: a session's semantic fields, and feedback kept apart from their values. */
export class ReviewFieldStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** Replaces the session's fields (intake, or a dataset chosen later). */
  async replace(trx: Knex, sessionId: string, fields: NewField[]): Promise<void> {
    await trx('review_fields').where({ session_id: sessionId }).delete();
    if (!fields.length) return;
    await trx('review_fields').insert(
      fields.map((f) => ({
        ...f,
        session_id: sessionId,
        source: json(f.source),
        candidates: JSON.stringify(f.candidates),
        superset: JSON.stringify(f.superset),
      })),
    );
  }

  async list(sessionId: string, trx: Knex = this.knex): Promise<FieldRow[]> {
    return trx<FieldRow>('review_fields').where({ session_id: sessionId }).orderBy('position');
  }

  async get(sessionId: string, fieldId: string, trx: Knex = this.knex): Promise<FieldRow> {
    const row = isUuid(fieldId) ? await trx<FieldRow>('review_fields').where({ id: fieldId, session_id: sessionId }).first() : undefined;
    if (!row) throw new NotFoundError('Field', fieldId);
    return row;
  }

  async update(
    trx: Knex,
    sessionId: string,
    fieldId: string,
    patch: Partial<
      Pick<FieldRow, 'label' | 'description' | 'provenance' | 'status' | 'locked' | 'source' | 'pending_candidate' | 'candidates'>
    >,
    by: { id: string | null; username: string },
  ): Promise<FieldRow> {
    const encoded: Record<string, unknown> = { ...patch };
    if ('source' in patch) encoded.source = json(patch.source);
    if ('pending_candidate' in patch) encoded.pending_candidate = json(patch.pending_candidate);
    if ('candidates' in patch) encoded.candidates = JSON.stringify(patch.candidates);
    const [row] = await trx('review_fields')
      .where({ id: fieldId, session_id: sessionId })
      .update({ ...encoded, updated_by: by.id, updated_by_username: by.username, updated_at: trx.fn.now() })
      .returning('*');
    if (!row) throw new NotFoundError('Field', fieldId);
    return row as FieldRow;
  }

  async addFeedback(trx: Knex, f: Omit<FeedbackRow, 'id' | 'created_at'>): Promise<FeedbackRow> {
    const [row] = await trx('review_field_feedback')
      .insert({ ...f, value_at_feedback: JSON.stringify(f.value_at_feedback) })
      .returning('*');
    return row as FeedbackRow;
  }

  async feedback(sessionId: string): Promise<FeedbackRow[]> {
    return this.knex<FeedbackRow>('review_field_feedback').where({ session_id: sessionId }).orderBy('created_at');
  }
}
