/** The `llm_docs` task input, built in one place for the HTTP route and the assistant. */
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Supersets } from '../environments/upstream.ts';
import type { generateDocsBody } from './schemas.ts';
import type { z } from 'zod';

export type GenerateDocsBody = z.output<typeof generateDocsBody>;

const DASHBOARD_LOOKUP_MS = 5_000;

export function llmDocsInput(
  body: GenerateDocsBody,
  dashboardIds: number[],
): { input: TaskInputOf<'llm_docs'>; params: Record<string, unknown> } {
  return {
    input: { envId: body.env_id, datasetIds: body.dataset_ids, providerId: body.llm_provider, language: body.language, dashboardIds },
    params: { ...body },
  };
}

/**
 * The dashboards using the datasets, so a dataset task shows in their history: best effort and
 * bounded in time (a dataset Superset cannot describe now still gets its task, which reports the
 * dataset's own failure).
 */
export async function dashboardsOfDatasets(supersets: Supersets, logger: Logger, envId: string, datasetIds: number[]): Promise<number[]> {
  const lookup = Promise.all(
    datasetIds.map((id) =>
      supersets
        .use(envId, (client) => client.datasets.relatedObjects(id))
        .then(
          (r) => r.dashboards.map((d) => d.id),
          (err: unknown) => {
            logger.debug({ err, env_id: envId, dataset_id: id }, 'dashboards of a dataset could not be read');
            return [] as number[];
          },
        ),
    ),
  ).then((lists) => [...new Set(lists.flat())].sort((a, b) => a - b));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<number[]>((resolve) => (timer = setTimeout(() => resolve([]), DASHBOARD_LOOKUP_MS)));
  try {
    return await Promise.race([lookup, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
