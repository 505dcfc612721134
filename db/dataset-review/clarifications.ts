import type { Knex } from 'knex';

export interface ClarificationRow {
  id: string;
  session_id: string;
  question_key: string;
  kind: string;
  question: string;
  options: unknown[];
  answer: unknown;
  session_version: number;
  feedback: string | null;
  feedback_comment: string | null;
  answered_by: string | null;
  answered_by_username: string;
  answered_at: Date;
}

/** `review_clarifications`: each answered question, the audit record of the answer (with its feedback). */
export class ReviewClarificationStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async record(trx: Knex, row: Omit<ClarificationRow, 'id' | 'answered_at'>): Promise<ClarificationRow> {
    const [out] = await trx('review_clarifications')
      .insert({ ...row, options: JSON.stringify(row.options), answer: JSON.stringify(row.answer) })
      .returning('*');
    return out as ClarificationRow;
  }

  async list(sessionId: string, trx: Knex = this.knex): Promise<ClarificationRow[]> {
    return trx<ClarificationRow>('review_clarifications').where({ session_id: sessionId }).orderBy('answered_at');
  }
}
