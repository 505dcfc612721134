/**
 * The repository sync's companions (docs/git.md, Companions): the companion kinds live in the
 * worker (the API may not import them), so the sync asks it through a short workflow and waits
 * for the files. A worker that does not answer in time, or a Superset that refuses, leaves the
 * repository's companion files as they were and the sync says so.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { GIT_COMPANIONS_WORKFLOW, type GitCompanionsCapture, type GitCompanionsInput } from '../../contracts/git.ts';
import { fromYaml } from '../../lib/git/dashboard-files.ts';

export type CompanionCapturer = (input: GitCompanionsInput) => Promise<GitCompanionsCapture>;

/** How long a sync waits for the worker to read the companions. */
const CAPTURE_TIMEOUT = '90 seconds';

export function temporalCapturer(temporal: Client, taskQueue: string): CompanionCapturer {
  return (input) =>
    temporal.workflow.execute(GIT_COMPANIONS_WORKFLOW, {
      taskQueue,
      workflowId: `git-companions-${input.subject.dashboardUuid}-${randomUUID()}`,
      args: [input],
      workflowExecutionTimeout: CAPTURE_TIMEOUT,
      staticSummary: `Switchyard: companions of dashboard ${input.dashboardId} of ${input.envId} read for its repository`,
    });
}

/** What the capture is told of the bundle's files: the dashboard's uuid and title, each dataset's database uuid. */
export function captureInput(
  envId: string,
  dashboardId: number,
  bundle: { dashboardUuid: string; title: string; files: Map<string, string> },
): GitCompanionsInput {
  const datasetDatabases: Record<string, string> = {};
  for (const [path, text] of bundle.files) {
    if (!path.startsWith('datasets/')) continue;
    const y = fromYaml(text);
    if (typeof y.uuid === 'string' && typeof y.database_uuid === 'string') datasetDatabases[y.uuid] = y.database_uuid;
  }
  return { envId, dashboardId, subject: { dashboardUuid: bundle.dashboardUuid, title: bundle.title, datasetDatabases } };
}
