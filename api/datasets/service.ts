/**
 * Review of LLM suggestions and the history of dataset changes: list suggestions beside the
 * values Superset holds now, accept (as suggested, or edited) or reject them, and undo a change.
 * Every write goes through the safe dataset writer (domain/datasets/safe-write.ts).
 */
import { isPersonWritten, type DatasetChangeStore } from '../../db/datasets/changes.ts';
import { acceptSuggestions, undoChange } from '../../domain/datasets/index.ts';
import type { SuggestionStatus, SuggestionStore } from '../../db/datasets/suggestions.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import type { Stores } from '../../db/stores.ts';
import { AppError, ConflictError, NotFoundError } from '../../lib/errors.ts';
import { valueOf } from '../../lib/superset/dataset-edit.ts';
import type { Principal } from '../auth/principal.ts';
import type { Supersets } from '../environments/upstream.ts';
import { toChangeView, toSuggestionView, type acceptAnswer } from './schemas.ts';
import type { z } from 'zod';

type AcceptAnswer = z.infer<typeof acceptAnswer>;

export class DatasetReviewService {
  readonly changes: DatasetChangeStore;
  readonly suggestions: SuggestionStore;
  private readonly supersets: Supersets;
  private readonly environments: EnvironmentStore;

  constructor(deps: { stores: Pick<Stores, 'datasetChanges' | 'datasetSuggestions' | 'environments'>; supersets: Supersets }) {
    this.changes = deps.stores.datasetChanges;
    this.suggestions = deps.stores.datasetSuggestions;
    this.supersets = deps.supersets;
    this.environments = deps.stores.environments;
  }

  private notFound(datasetId: number) {
    return { notFound: (env: { name: string }) => `Dataset ${datasetId} in environment '${env.name}'` };
  }

  async listSuggestions(envId: string, datasetId: number, status: SuggestionStatus | 'all', page: number, pageSize: number) {
    return this.supersets.use(
      envId,
      async (client, env) => {
        const detail = await client.datasets.get(datasetId);
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
   * and writes them in one dataset update (domain/datasets/suggestion-decisions.ts decides which).
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
        const outcome = await acceptSuggestions(client, this, { envId: env.id, datasetId, items: items ?? null, actor });
        if (outcome.status === 'conflict')
          throw new ConflictError(
            `dataset ${datasetId} changed in Superset while the suggestions were being written; nothing was written`,
            'dataset_changed',
            {
              differences: outcome.differences,
            },
          );
        const { change, accepted, skipped } = outcome;
        return { env_id: env.id, dataset_id: datasetId, change: change ? toChangeView(change) : null, accepted, skipped };
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
    return {
      env_id: env.id,
      dataset_id: datasetId,
      items: rows.map(toChangeView),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }

  /** The change an undo names; NotFoundError when unknown. */
  async changeToUndo(changeId: string) {
    const change = await this.changes.get(changeId);
    if (!change) throw new NotFoundError('Dataset change', changeId);
    return change;
  }

  async undo(changeId: string, force: boolean, principal: Principal) {
    const change = await this.changeToUndo(changeId);
    const actor = { id: principal.userId ?? null, username: principal.username ?? null };
    const outcome = await this.supersets.use(
      change.env_id,
      (client) => undoChange(client, this.changes, change.id, actor, force),
      this.notFound(change.dataset_id),
    );
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
