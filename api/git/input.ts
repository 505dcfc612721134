/** The `git_deploy` task input, built in one place for the HTTP route and the assistant. */
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import type { deployBody } from './schemas.ts';
import type { z } from 'zod';

export type DeployBody = z.output<typeof deployBody>;

/**
 * `prepared`: what GitService.prepareDeploy resolved (the dashboard's uuid, the commit id, whether
 * the target is protected); `maxApprovalSeconds`: GIT_DEPLOY_APPROVAL_TIMEOUT_SECONDS, which a
 * request may shorten, never extend.
 */
export function gitDeployInput(
  body: DeployBody,
  dashboardId: number,
  prepared: { uuid: string; commit: string; protected: boolean },
  requestedBy: string | null,
  maxApprovalSeconds: number,
): { input: TaskInputOf<'git_deploy'>; params: Record<string, unknown> } {
  const targetEnvId = body.target_env_id ?? body.env_id;
  return {
    input: {
      dashboardUuid: prepared.uuid,
      dashboardId,
      envId: body.env_id,
      targetEnvId,
      commit: prepared.commit,
      overwrite: body.overwrite,
      dbMappings: body.db_mappings,
      approval: prepared.protected
        ? { required: true, requestedBy, timeoutSeconds: Math.min(body.approval_timeout_seconds ?? Infinity, maxApprovalSeconds) }
        : { required: false, requestedBy, timeoutSeconds: 0 },
    },
    params: { ...body, target_env_id: targetEnvId, dashboard_id: dashboardId, commit: prepared.commit },
  };
}
