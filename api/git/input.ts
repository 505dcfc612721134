/** The `git_deploy` task input, built in one place for the HTTP route and the assistant. */
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import { verificationInput } from '../http/verification.ts';
import type { deployBody } from './schemas.ts';
import type { z } from 'zod';

export type DeployBody = z.output<typeof deployBody>;

/**
 * `prepared`: what GitService.prepareDeploy resolved (the dashboard's uuid, the commit id).
 * Whether the deploy waits for approval is the task service's decision (the target protected);
 * `approvalSeconds` is the request's shorter window for that case.
 */
export function gitDeployInput(
  body: DeployBody,
  dashboardId: number,
  prepared: { uuid: string; commit: string; syncedEnvId?: string | null },
  requestedBy: string | null,
): { input: TaskInputOf<'git_deploy'>; params: Record<string, unknown>; approvalSeconds?: number } {
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
      requestedBy,
      ...(prepared.syncedEnvId !== undefined ? { syncedEnvId: prepared.syncedEnvId } : {}),
      ...verificationInput(body.verification),
      ...(body.companions ? { companions: body.companions } : {}),
    },
    params: { ...body, target_env_id: targetEnvId, dashboard_id: dashboardId, commit: prepared.commit },
    ...(body.approval_timeout_seconds ? { approvalSeconds: body.approval_timeout_seconds } : {}),
  };
}
