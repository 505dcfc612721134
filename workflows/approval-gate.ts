import { ApplicationFailure, condition, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ApprovalDecision, ApprovalOutcome, TaskApproval } from '../contracts/tasks.ts';
import { decideApprovalUpdate } from '../contracts/workflow-messages.ts';

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds' },
});

/** No approval was needed: what a task that does not wait reports. */
export const NOT_GATED: ApprovalOutcome = { required: false, decision: null, by: null, comment: null };

/**
 * Waits, when the task writes into a protected environment, for another person's decision, sent
 * as a Temporal update whose validator refuses the requester (compared by user id: a person is the
 * same person with a password or with a key they made) and a second decision. The row shows
 * AWAITING_APPROVAL meanwhile, and the decision lands in the row and the task's log.
 * A run that continues an earlier one (continue-as-new) passed the gate already.
 */
export async function awaitApproval(approval: TaskApproval | undefined, what: string): Promise<ApprovalOutcome> {
  if (!approval?.required || workflowInfo().continuedFromExecutionRunId) return NOT_GATED;
  let waiting = false;
  let decision: ApprovalDecision | undefined;
  setHandler(
    decideApprovalUpdate,
    (d) => {
      decision = d;
      return { decision: d.decision, status: d.decision === 'approve' ? 'RUNNING' : 'CANCELLED' };
    },
    {
      validator: (d) => {
        if (decision)
          throw ApplicationFailure.nonRetryable(
            `this task was already ${decision.decision === 'approve' ? 'approved' : 'rejected'} by ${decision.username}`,
            'AlreadyDecided',
          );
        if (!waiting) throw ApplicationFailure.nonRetryable('this task is not waiting for approval', 'NotAwaitingApproval');
        if (approval.requestedBy !== null && d.userId === approval.requestedBy)
          throw ApplicationFailure.nonRetryable('the requester of a task cannot approve or reject it: another person must', 'SelfApproval');
      },
    },
  );
  waiting = true;
  await bookkeeping.recordTaskApproval({ waiting: true });
  log.info(`waiting up to ${approval.timeoutSeconds}s for another person to approve ${what} (the environment is protected)`);
  const decided = await condition(() => decision !== undefined, `${approval.timeoutSeconds}s`);
  waiting = false;
  const outcome: ApprovalOutcome =
    decided && decision
      ? { required: true, decision: decision.decision, by: decision.username, comment: decision.comment ?? null }
      : { required: true, decision: 'timeout', by: null, comment: null };
  await bookkeeping.recordTaskApproval({ waiting: false, outcome });
  if (outcome.decision === 'approve') log.info(`approved by ${outcome.by}${outcome.comment ? `: ${outcome.comment}` : ''}`);
  return outcome;
}

/** Why a gated task did not go on, in the words its row and log keep; null when it was approved. */
export function denialOf(
  outcome: ApprovalOutcome,
  approval: TaskApproval | undefined,
  nothingDone: string,
): { message: string; type: string } | null {
  if (outcome.decision === 'timeout')
    return {
      message: `no approval within ${approval?.timeoutSeconds ?? 0}s: the approval window ran out; ${nothingDone}`,
      type: 'ApprovalTimeout',
    };
  if (outcome.decision === 'reject')
    return {
      message: `rejected by ${outcome.by}${outcome.comment ? `: ${outcome.comment}` : ''}; ${nothingDone}`,
      type: 'ApprovalRejected',
    };
  return null;
}
