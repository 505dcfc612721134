import type { DictionarySource } from '../../../contracts/datasets.ts';
import type { ActivityDeps } from '../../deps.ts';
import type { MapDatasetInput } from './entries.ts';
import { mapDatasetColumns } from './map-one.ts';
import { prepareDictionary } from './prepare.ts';

export type { MapDatasetInput };

/** Column mapping: the task's dictionary prepared once, then each dataset's columns matched to it and written (or planned). */
export function createMapColumnsActivities(deps: ActivityDeps) {
  return {
    prepareDictionary: (input: { envId: string; source: DictionarySource }) => prepareDictionary(deps, input),
    mapDatasetColumns: (input: MapDatasetInput) => mapDatasetColumns(deps, input),
  };
}
