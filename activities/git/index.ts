import type { GitDeployInput } from '../../contracts/git.ts';
import type { ActivityDeps } from '../deps.ts';
import { deployDashboardCommit, recordGitDeployment } from './deploy.ts';

/** A pinned commit's deploy: the import through the migration path, and the record of what went live where. */
export function createGitActivities(deps: ActivityDeps) {
  return {
    deployDashboardCommit: (input: GitDeployInput) => deployDashboardCommit(deps, input),
    recordGitDeployment: (input: Parameters<typeof recordGitDeployment>[1]) => recordGitDeployment(deps, input),
  };
}
