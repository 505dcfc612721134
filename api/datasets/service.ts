/**
 * Review of LLM suggestions and the history of dataset changes: list suggestions beside the
 * values Superset holds now, accept (as suggested, or edited) or reject them, and undo a change.
 * Every write goes through the safe dataset writer (db/datasets/safe-write.ts).
 */
import type { Knex } from 'knex';
import { DatasetChangeStore, isPersonWritten } from '../../db/datasets/changes.ts';
import { undoChange, writeDataset } from '../../db/datasets/safe-write.ts';
import { SuggestionStore, type SuggestionStatus } from '../../db/datasets/suggestions.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import { AppError, ConflictError, NotFoundError } from '../../lib/errors.ts';
import { sameValue, valueOf, type FieldEdit } from '../../lib/superset/dataset-edit.ts';
import type { Principal } from '../auth/principal.ts';
import type { Supersets } from '../environments/upstream.ts';
import { toChangeView, toSuggestionView, type acceptAnswer } from './schemas.ts';
import type { z } from 'zod';

type AcceptAnswer = z.infer<typeof acceptAnswer>;
type Skip = AcceptAnswer['skipped'][number];

export class DatasetReviewService {
  private readonly changes: DatasetChangeStore;
  private readonly suggestions: SuggestionStore;
  private readonly supersets: Supersets;
  private readonly environments: EnvironmentStore;

  constructor(deps: { knex: Knex; supersets: Supersets; environments: EnvironmentStore }) {
    this.changes = new DatasetChangeStore(deps.knex);
    this.suggestions = new SuggestionStore(deps.knex);
    this.supersets = deps.supersets;
    this.environments = deps.environments;
  }

  private notFound(datasetId: number) {
    return { notFound: (env: { name: string }) => `Dataset ${datasetId} in environment '${env.name}'` };
  }

  async listSuggestions(envId: string, datasetId: number, status: SuggestionStatus | 'all', page: number, pageSize: number) {
    return this.supersets.use(
      envId,
      async (client, env) => {
        const detail = await client.getDataset(datasetId);
        const { rows, total } = await this.suggestions.list(env.id, datasetId, status, page, pageSize);
        const lastWritten = await this.changes.lastWritten(env.id, datasetId);
        return {
          env_id: env.id,
          dataset_id: datasetId,
          dataset_name: detail.table_name,
          dataset_description: detail.description ?? null,
          items: rows.map((s) => {
            const current = valueOf(detail, s);
            return toSuggestionView(s, { current, personWritten: isPersonWritten(current, s, lastWritten) });
          }),
          total,
          page,
          page_size: pageSize,
          has_next: page * pageSize < total,
        };
      },
      this.notFound(datasetId),
    );
  }

  /**
   * Accepts suggestions (all pending ones, or the listed ones, each as suggested or as edited)
   * and writes them in one dataset update. A field that holds a value a person wrote, or that
   * changed since the suggestion was made, is skipped unless its item says `overwrite`.
   */
  async accept(
    envId: string,
    datasetId: number,
    items: Array<{ suggestion_id: string; value?: string; overwrite: boolean }> | undefined,
    principal: Principal,
  ): Promise<AcceptAnswer> {
    const actor = { id: principal.userId ?? null, username: principal.username ?? null };
    return this.supersets.use(
      envId,
      async (client, env) => {
        const detail = await client.getDataset(datasetId);
        const requested = items ?? null;
        const rows = await this.suggestions.forDecision(env.id, datasetId, requested ? requested.map((i) => i.suggestion_id) : null);
        const byId = new Map(rows.map((r) => [r.id, r]));
        const wanted = requested ?? rows.map((r) => ({ suggestion_id: r.id, value: undefined, overwrite: false }));
        const lastWritten = await this.changes.lastWritten(env.id, datasetId);
        const skipped: Skip[] = [];
        const accepted: AcceptAnswer['accepted'] = [];
        const edits: FieldEdit[] = [];
        const taken = new Set<string>();
        for (const w of wanted) {
          const s = byId.get(w.suggestion_id);
          if (!s) {
            skipped.push({ suggestion_id: w.suggestion_id, reason: 'unknown', detail: `no suggestion ${w.suggestion_id} for dataset ${datasetId} in this environment` });
            continue;
          }
          if (s.status !== 'pending') {
            skipped.push({ suggestion_id: s.id, reason: 'not_pending', detail: `the suggestion is ${s.status}` });
            continue;
          }
          const ref = `${s.target}:${s.column_name ?? ''}:${s.field}`;
          if (taken.has(ref)) {
            skipped.push({ suggestion_id: s.id, reason: 'not_pending', detail: 'another accepted suggestion in this request sets the same field' });
            continue;
          }
          const current = valueOf(detail, s);
          if (current === undefined) {
            skipped.push({ suggestion_id: s.id, reason: 'no_such_column', detail: `the dataset has no column '${s.column_name}' any more` });
            continue;
          }
          const value = w.value ?? s.value;
          if (!w.overwrite && !sameValue(current, s.base_value)) {
            skipped.push({
              suggestion_id: s.id,
              reason: 'changed_since',
              detail: `the field changed in Superset after the suggestion was made (it holds ${JSON.stringify(current)}); accept with overwrite to replace it`,
            });
            continue;
          }
          if (!w.overwrite && isPersonWritten(current, s, lastWritten) && !sameValue(current, value)) {
            skipped.push({
              suggestion_id: s.id,
              reason: 'person_written',
              detail: `a person wrote the current value (${JSON.stringify(current)}); accept with overwrite to replace it`,
            });
            continue;
          }
          taken.add(ref);
          edits.push({ target: s.target, column_name: s.column_name, field: s.field, value });
          accepted.push({ suggestion_id: s.id, target: s.target, column_name: s.column_name, field: s.field, value, edited: w.value !== undefined && w.value !== s.value });
        }
        if (!edits.length) return { env_id: env.id, dataset_id: datasetId, change: null, accepted: [], skipped };

        const written = await writeDataset(client, this.changes, { envId: env.id, datasetId, base: detail, edits, source: 'suggestions', actor });
        if (written.status === 'conflict') {
          throw new ConflictError(`dataset ${datasetId} changed in Superset while the suggestions were being written; nothing was written`, 'dataset_changed', {
            differences: written.differences,
          });
        }
        const changeId = written.status === 'applied' ? written.change.id : null;
        await this.suggestions.markAccepted(
          accepted.map((a) => ({ id: a.suggestion_id, value: a.value })),
          actor,
          changeId,
        );
        return {
          env_id: env.id,
          dataset_id: datasetId,
          change: written.status === 'applied' ? toChangeView(written.change) : null,
          accepted,
          skipped,
        };
      },
      this.notFound(datasetId),
    );
  }

  async reject(envId: string, datasetId: number, ids: string[] | undefined, principal: Principal) {
    const env = await this.environments.get(envId);
    const rows = await this.suggestions.forDecision(env.id, datasetId, ids ?? null);
    const rejected = await this.suggestions.markRejected(
      rows.filter((r) => r.status === 'pending').map((r) => r.id),
      { id: principal.userId ?? null, username: principal.username ?? null },
    );
    return { env_id: env.id, dataset_id: datasetId, rejected };
  }

  async listChanges(envId: string, datasetId: number, page: number, pageSize: number) {
    const env = await this.environments.get(envId);
    const { rows, total } = await this.changes.listForDataset(env.id, datasetId, page, pageSize);
    return { env_id: env.id, dataset_id: datasetId, items: rows.map(toChangeView), total, page, page_size: pageSize, has_next: page * pageSize < total };
  }

  async undo(changeId: string, force: boolean, principal: Principal) {
    const change = await this.changes.get(changeId);
    if (!change) throw new NotFoundError('Dataset change', changeId);
    const actor = { id: principal.userId ?? null, username: principal.username ?? null };
    const outcome = await this.supersets.use(change.env_id, (client) => undoChange(client, this.changes, change.id, actor, force), this.notFound(change.dataset_id));
    if (outcome.status === 'conflict') {
      throw new ConflictError(
        `change ${change.id} cannot be undone without replacing later work: ${outcome.differences.join('; ')}; send {"force": true} to undo anyway`,
        'dataset_changed',
        { differences: outcome.differences },
      );
    }
    if (outcome.status === 'not_undoable') {
      throw new AppError(409, 'not_undoable', 'Conflict', `change ${change.id} cannot be undone: ${outcome.reason}`);
    }
    return { undo: toChangeView(outcome.undo), undone: toChangeView(outcome.original) };
  }
}
