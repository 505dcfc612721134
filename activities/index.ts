import { createAssistantActivities } from './assistant/index.ts';
import { createBackupActivities } from './backups/index.ts';
import { createBrowserCheckActivities } from './browser-check/index.ts';
import { createCleanReleaseActivities } from './clean-release/index.ts';
import { createDatasetLaunchActivities } from './dataset-launch/index.ts';
import { createDatasetChangeActivities } from './datasets/dataset-change.ts';
import { createLlmDocsActivities } from './datasets/llm-docs/index.ts';
import { createMapColumnsActivities } from './datasets/map-columns/index.ts';
import type { ActivityDeps } from './deps.ts';
import { createGitActivities } from './git/index.ts';
import { createMigrationActivities } from './dashboard-migration/index.ts';
import { createScheduleActivities } from './schedules/index.ts';
import { createSelfcheckActivities } from './selfcheck/steps.ts';
import { createTaskLifecycleActivities } from './tasks/lifecycle.ts';
import { createValidationActivities } from './validation/index.ts';

export type { ActivityDeps };

/** Every activity the worker registers; workflows type their proxies with this. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createTaskLifecycleActivities(deps),
    ...createSelfcheckActivities(deps),
    ...createMigrationActivities(deps),
    ...createBrowserCheckActivities(deps),
    ...createBackupActivities(deps),
    ...createGitActivities(deps),
    ...createMapColumnsActivities(deps),
    ...createLlmDocsActivities(deps),
    ...createDatasetChangeActivities(deps),
    ...createCleanReleaseActivities(deps),
    ...createDatasetLaunchActivities(deps),
    ...createAssistantActivities(deps),
    ...createScheduleActivities(deps),
    ...createValidationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
