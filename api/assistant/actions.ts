/**
 * Carrying out a planned action, the one way for both paths: at once (a dry run) or once its
 * confirmation is confirmed (under the confirmation's idempotency key). A task starts through the
 * same task service and registry as its direct route; a git commit and a dataset review write go
 * through the services their routes use.
 */
import { PullRequests } from '../git/pull-requests.ts';
import type { DatasetReviewAction, PlannedAction } from '../../contracts/assistant.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { carryOutMcpCall } from '../mcp/carry-out.ts';
import type { ReviewSessionBinder } from './binder.ts';

/** What an action produced: the task it started, or a direct action's result. */
export type Outcome = { taskId: string; result?: undefined } | { taskId?: undefined; result: unknown };

export async function carryOutAction(
  app: AppContext,
  binder: ReviewSessionBinder | undefined,
  principal: Principal,
  action: PlannedAction,
  idempotencyKey?: string,
): Promise<Outcome> {
  switch (action.type) {
    case 'task': {
      const { task } = await app.tasks.create({
        kind: action.kind,
        input: action.input,
        params: action.params,
        owner: principal,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      });
      return { taskId: task.id };
    }
    case 'git_commit':
      return { result: await app.git.commit(principal, action.envId, action.dashboardId, action.message) };
    case 'git_pull_request': {
      const body = {
        env_id: action.envId,
        branch: action.branch,
        title: action.title,
        target_env_id: action.targetEnvId,
        verification: 'queries' as const,
      };
      const opened = await new PullRequests(app).open(principal, action.linkBase, action.dashboardId, body);
      return { result: opened };
    }
    case 'dataset_review':
      return { result: { session_id: action.sessionId, op: action.op, ...(await reviewWrite(reviewBinder(binder), principal, action)) } };
    case 'mcp_call':
      return carryOutMcpCall(app, principal, action, idempotencyKey);
  }
}

export function reviewBinder(binder: ReviewSessionBinder | undefined): ReviewSessionBinder {
  if (!binder) throw new NotFoundError('Dataset review session', '');
  return binder;
}

/** The write at the version the action carries (409 `version_conflict` when the session moved since). */
function reviewWrite(binder: ReviewSessionBinder, principal: Principal, action: DatasetReviewAction): Promise<{ version: number }> {
  switch (action.op) {
    case 'set_field':
      return binder.setField(principal, action.sessionId, action.version, action.fieldId, { label: action.label });
    case 'approve_mappings':
      return binder.approveMappings(principal, action.sessionId, action.version);
    case 'answer':
      return binder.answer(principal, action.sessionId, action.version, action.questionKey, {
        option: action.option,
        ...(action.label !== undefined ? { label: action.label } : {}),
      });
  }
}
