/**
 * The write of a `dataset_change` task (a protected environment's accepted suggestions or undo),
 * run once another person approved it: the same decisions and safe write the API makes at once
 * in other environments. A refusal (conflict, nothing to undo) is the item's outcome; a Superset
 * outage is thrown for Temporal to retry.
 */
import type { DatasetChangeInput, DatasetChangeItem } from '../../contracts/datasets.ts';
import { acceptSuggestions, undoChange } from '../../domain/datasets/index.ts';
import type { ActivityDeps } from '../deps.ts';

export function createDatasetChangeActivities(deps: Pick<ActivityDeps, 'stores' | 'superset'>) {
  const stores = { changes: deps.stores.datasetChanges, suggestions: deps.stores.datasetSuggestions };

  return {
    async applyDatasetChange(input: DatasetChangeInput): Promise<DatasetChangeItem> {
      const client = await deps.superset(input.envId);
      const base = { kind: 'dataset' as const, id: input.datasetId, title: null, next_actions: [] };
      if (input.operation.type === 'accept') {
        const r = await acceptSuggestions(client, stores, {
          envId: input.envId,
          datasetId: input.datasetId,
          items: input.operation.items,
          actor: input.actor,
        });
        if (r.status === 'conflict')
          return {
            ...base,
            status: 'conflict',
            outcome: 'failed',
            step: 'write',
            change_id: null,
            error: `dataset ${input.datasetId} changed in Superset while the suggestions were being written; nothing was written: ${r.differences.slice(0, 5).join('; ')}`,
          };
        return {
          ...base,
          status: r.change ? 'applied' : 'unchanged',
          outcome: r.change ? 'succeeded' : 'skipped',
          change_id: r.change?.id ?? null,
          accepted: r.accepted,
          skipped: r.skipped,
        };
      }
      const { changeId, force } = input.operation;
      const r = await undoChange(client, stores.changes, changeId, input.actor, force);
      if (r.status === 'conflict')
        return {
          ...base,
          status: 'conflict',
          outcome: 'failed',
          step: 'undo',
          change_id: null,
          error: `change ${changeId} cannot be undone without replacing later work: ${r.differences.join('; ')}; request the undo again with force`,
        };
      if (r.status === 'not_undoable')
        return {
          ...base,
          status: 'not_undoable',
          outcome: 'skipped',
          step: 'undo',
          change_id: null,
          error: `change ${changeId} cannot be undone: ${r.reason}`,
        };
      return { ...base, status: 'applied', outcome: 'succeeded', change_id: r.undo.id, undone_change_id: r.original.id };
    },
  };
}
