import type { GitCompanionsCapture, GitCompanionsInput, GitDeployInput } from '../../contracts/git.ts';
import type { ActivityDeps } from '../deps.ts';
import { captureCompanions } from '../../domain/migration/index.ts';
import { deployDashboardCommit, recordGitDeployment } from './deploy.ts';
import { commentDeployResult, commentPullRequest, publishPreview, setPreviewStatus, setValidationStatus } from './reviews.ts';

/**
 * A repository sync's companions read as files; a pinned commit's deploy: the import through the
 * migration path, and the record of what went live where; a pull request's preview status, body
 * and comments.
 */
export function createGitActivities(deps: ActivityDeps) {
  return {
    deployDashboardCommit: (input: GitDeployInput) => deployDashboardCommit(deps, input),
    captureGitCompanions: async (input: GitCompanionsInput): Promise<GitCompanionsCapture> => {
      const { files, kinds } = await captureCompanions(await deps.superset(input.envId), input.dashboardId, input.subject);
      return { files, kinds };
    },
    recordGitDeployment: (input: Parameters<typeof recordGitDeployment>[1]) => recordGitDeployment(deps, input),
    setPreviewStatus: (input: Parameters<typeof setPreviewStatus>[1]) => setPreviewStatus(deps, input),
    publishPreview: (input: Parameters<typeof publishPreview>[1]) => publishPreview(deps, input),
    setValidationStatus: (input: Parameters<typeof setValidationStatus>[1]) => setValidationStatus(deps, input),
    commentPullRequest: (input: Parameters<typeof commentPullRequest>[1]) => commentPullRequest(deps, input),
    commentDeployResult: (input: Parameters<typeof commentDeployResult>[1]) => commentDeployResult(deps, input),
  };
}
