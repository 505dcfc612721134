import { taskPolicy } from './policy.ts';
import type { Permission } from '../../contracts/permissions.ts';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { ApprovalDecision, TaskApproval } from '../../contracts/tasks.ts';
import { decideApprovalUpdate } from '../../contracts/workflow-messages.ts';
import { TASK_KINDS, type TaskKindName } from '../../contracts/task-kinds.ts';
import { AppError, ConflictError, ForbiddenError } from '../../lib/errors.ts';
import { can, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { taskIdParams } from './schemas.ts';

/** Whether a task waits for a person's decision: the task service decided it when the task was created. */
function isGated(workflowInput: unknown): boolean {
  return (workflowInput as { approval?: TaskApproval } | null)?.approval?.required === true;
}

const decisionBody = z.object({ comment: z.string().trim().max(2000).optional() }).strict();
const decisionView = z.object({
  task_id: z.string(),
  decision: z.enum(['approve', 'reject']),
  status: z.enum(['RUNNING', 'CANCELLED']).describe('RUNNING: the task goes on; CANCELLED: it ends without doing anything'),
  by: z.string(),
});

const REFUSALS: Record<string, (m: string) => AppError> = {
  SelfApproval: (m) => new AppError(403, 'self_approval', 'Forbidden', m),
  AlreadyDecided: (m) => new ConflictError(m, 'already_decided'),
  NotAwaitingApproval: (m) => new ConflictError(m, 'not_awaiting_approval'),
};

/**
 * Approve or reject a task waiting in AWAITING_APPROVAL. Needs `tasks:APPROVE` plus the
 * permission that starts the task's kind (`git:WRITE` for a deploy); the requester can never
 * decide on their own task (checked here and again by the workflow's update validator).
 */
export function approvalRoutes(app: AppContext): AnyRoute[] {
  const decide = async (taskId: string, principal: Principal, decision: ApprovalDecision['decision'], comment?: string) => {
    const task = await app.tasks.get(taskId);
    const kind = TASK_KINDS[task.type as TaskKindName];
    const needed: Permission[] = ['tasks:APPROVE', ...(kind && kind.permission !== 'admin' ? [kind.permission] : [])];
    const missing = needed.filter((p) => !can(principal, p));
    if (missing.length) throw new ForbiddenError(`Deciding on this task needs the permission ${missing.join(' and ')}`);
    if (!isGated(task.workflow_input))
      throw new ConflictError(
        `This ${task.type} task does not write into a protected environment, so it never waits for approval`,
        'not_approvable',
      );
    if (task.status !== 'AWAITING_APPROVAL')
      throw new ConflictError(`The task is ${task.status}, not waiting for approval`, 'not_awaiting_approval');
    if (!taskPolicy.decide(principal, task))
      throw new AppError(403, 'self_approval', 'Forbidden', 'the requester of a task cannot approve or reject it: another person must');
    try {
      const r = await app.temporal.workflow.getHandle(task.id).executeUpdate(decideApprovalUpdate, {
        args: [{ decision, userId: principal.userId, username: principal.username, ...(comment ? { comment } : {}) }],
      });
      app.logger.info({ task_id: task.id, decision, by: principal.username }, 'task approval decided');
      return { task_id: task.id, decision: r.decision, status: r.status as 'RUNNING' | 'CANCELLED', by: principal.username };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
        const refusal = REFUSALS[err.cause.type ?? ''];
        if (refusal) throw refusal(err.cause.message);
      }
      throw err;
    }
  };

  const route = (decision: ApprovalDecision['decision']) =>
    defineRoute({
      method: 'post',
      path: `/api/tasks/:task_id/${decision}`,
      tag: 'Tasks',
      summary: decision === 'approve' ? 'Approve a task waiting for approval' : 'Reject a task waiting for approval',
      description:
        decision === 'approve'
          ? 'Lets a task waiting in `AWAITING_APPROVAL` (one that writes into a protected environment) go on at once; the decision is kept in the task, and the requester cannot decide on their own task. Details: docs/tasks.md#post-apitaskstask_idapprove.'
          : 'The task ends CANCELLED with the reason (and the comment); nothing is written. Same permissions as approve.',
      access: 'authenticated',
      params: taskIdParams,
      body: decisionBody,
      responses: {
        200: { description: 'Decided', schema: decisionView },
        403: { description: 'Missing permission, or `self_approval`' },
        404: { description: 'Unknown task' },
        409: { description: '`not_awaiting_approval`, `already_decided` or `not_approvable`' },
      },
      handler: (_ctx, { params, body, principal }) => decide(params.task_id, principal, decision, body.comment),
    });

  return [route('approve'), route('reject')];
}
