import type { Knex } from 'knex';
import { isUuid } from '../../lib/ids.ts';
import type { FieldRef } from '../../lib/dataset-fields.ts';

export type SuggestionStatus = 'pending' | 'accepted' | 'rejected' | 'superseded';

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface SuggestionRow extends FieldRef {
  id: string;
  env_id: string;
  dataset_id: number;
  task_id: string | null;
  value: string;
  base_value: string | null;
  status: SuggestionStatus;
  provider_id: string;
  provider_name: string;
  model: string;
  prompt_version: string;
  language: string;
  usage: TokenUsage | null;
  generated_at: Date;
  decided_by_id: string | null;
  decided_by_username: string | null;
  decided_at: Date | null;
  accepted_value: string | null;
  change_id: string | null;
}

export interface NewSuggestion extends FieldRef {
  value: string;
  base_value: string | null;
}

export interface Provenance {
  providerId: string;
  providerName: string;
  model: string;
  promptVersion: string;
  language: string;
  usage: TokenUsage | null;
}

/** `dataset_suggestions`: what an LLM proposed for a dataset's fields, until a person accepts or rejects it. */
export class SuggestionStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /**
   * Stores a task's suggestions for one dataset; the pending suggestions of earlier tasks for the
   * same fields are superseded. Idempotent per (task, dataset, field): a retried activity adds nothing.
   */
  async saveForTask(taskId: string, envId: string, datasetId: number, items: NewSuggestion[], p: Provenance): Promise<number> {
    return this.knex.transaction(async (trx) => {
      const existing = await trx('dataset_suggestions')
        .where({ task_id: taskId, dataset_id: datasetId })
        .count<{ count: string }[]>({ count: '*' });
      if (Number(existing[0].count) > 0) return Number(existing[0].count);
      for (const s of items) {
        await trx('dataset_suggestions')
          .where({ env_id: envId, dataset_id: datasetId, target: s.target, field: s.field, status: 'pending' })
          .andWhereRaw("coalesce(column_name, '') = ?", [s.column_name ?? ''])
          .update({ status: 'superseded' });
      }
      if (items.length) {
        await trx('dataset_suggestions').insert(
          items.map((s) => ({
            env_id: envId,
            dataset_id: datasetId,
            task_id: taskId,
            target: s.target,
            column_name: s.column_name,
            field: s.field,
            value: s.value,
            base_value: s.base_value,
            provider_id: p.providerId,
            provider_name: p.providerName,
            model: p.model,
            prompt_version: p.promptVersion,
            language: p.language,
            usage: p.usage ? JSON.stringify(p.usage) : null,
          })),
        );
      }
      return items.length;
    });
  }

  /**
   * Of these texts, the ones an LLM suggested that no person accepted (pending, rejected or
   * superseded, and never accepted with the same text): a release may not carry them unreviewed.
   */
  async unacceptedAmong(values: readonly string[]): Promise<Array<{ value: string; status: string }>> {
    if (!values.length) return [];
    return this.knex('dataset_suggestions as s')
      .distinct('s.value', 's.status')
      .whereRaw('s.value = any(?::text[])', [values as string[]] as never)
      .whereNot('s.status', 'accepted')
      .whereNotExists((q) => {
        q.select(1).from('dataset_suggestions as a').whereRaw('a.value = s.value').andWhere('a.status', 'accepted');
      });
  }

  async countForTask(taskId: string, datasetId: number): Promise<number> {
    const [{ count }] = await this.knex('dataset_suggestions')
      .where({ task_id: taskId, dataset_id: datasetId })
      .count<{ count: string }[]>({ count: '*' });
    return Number(count);
  }

  async list(
    envId: string,
    datasetId: number,
    status: SuggestionStatus | 'all',
    page: number,
    pageSize: number,
  ): Promise<{ rows: SuggestionRow[]; total: number }> {
    const base = () => {
      const q = this.knex<SuggestionRow>('dataset_suggestions').where({ env_id: envId, dataset_id: datasetId });
      return status === 'all' ? q : q.andWhere({ status });
    };
    const [{ count }] = await base().count<{ count: string }[]>({ count: '*' });
    const rows = await base()
      .orderBy('generated_at', 'desc')
      .orderByRaw("target, coalesce(column_name, ''), field, id")
      .offset((page - 1) * pageSize)
      .limit(pageSize);
    return { rows, total: Number(count) };
  }

  /** The dataset's suggestions with these ids (others are left out), or all its pending ones. */
  async forDecision(envId: string, datasetId: number, ids: string[] | null): Promise<SuggestionRow[]> {
    const q = this.knex<SuggestionRow>('dataset_suggestions').where({ env_id: envId, dataset_id: datasetId });
    if (ids === null) return q.andWhere({ status: 'pending' }).orderByRaw("target, coalesce(column_name, ''), field");
    const valid = ids.filter(isUuid);
    return valid.length ? q.whereIn('id', valid) : [];
  }

  /** Accepted as `value` (the suggestion, or a person's edit of it) through change `changeId`. */
  async markAccepted(
    items: Array<{ id: string; value: string | null }>,
    by: { id: string | null; username: string | null },
    changeId: string | null,
  ): Promise<void> {
    await this.knex.transaction(async (trx) => {
      for (const i of items) {
        await trx('dataset_suggestions').where({ id: i.id, status: 'pending' }).update({
          status: 'accepted',
          accepted_value: i.value,
          decided_by_id: by.id,
          decided_by_username: by.username,
          decided_at: trx.fn.now(),
          change_id: changeId,
        });
      }
    });
  }

  /** Accepted column suggestions of a dataset, newest first (what a person approved an LLM to say). */
  async acceptedFor(envId: string, datasetId: number): Promise<SuggestionRow[]> {
    return this.knex<SuggestionRow>('dataset_suggestions')
      .where({ env_id: envId, dataset_id: datasetId, status: 'accepted', target: 'column' })
      .orderBy('decided_at', 'desc');
  }

  async markRejected(ids: string[], by: { id: string | null; username: string | null }): Promise<number> {
    if (!ids.length) return 0;
    return this.knex('dataset_suggestions')
      .whereIn('id', ids)
      .andWhere({ status: 'pending' })
      .update({ status: 'rejected', decided_by_id: by.id, decided_by_username: by.username, decided_at: this.knex.fn.now() });
  }
}
