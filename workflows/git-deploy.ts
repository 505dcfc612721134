import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineUpdate,
  log,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { APPROVAL_UPDATE, type ApprovalDecision, type GitDeployInput, type GitDeployItem, type GitDeployResult } from '../contracts/git.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

const deploy = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 4 },
});
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds' },
});

export const decideApproval = defineUpdate<{ decision: ApprovalDecision['decision']; status: string }, [ApprovalDecision]>(APPROVAL_UPDATE);

/**
 * Deploys a dashboard's repository at a pinned commit into an environment. Into a protected
 * environment it first waits (AWAITING_APPROVAL) for another person's decision, sent as a
 * Temporal update whose validator refuses the requester and a second decision; a window that
 * runs out ends the task CANCELLED with the reason, and nothing is deployed.
 */
export async function gitDeployWorkflow(input: GitDeployInput): Promise<GitDeployResult> {
  let waiting = false;
  let decision: ApprovalDecision | undefined;
  setHandler(
    decideApproval,
    (d) => {
      decision = d;
      return { decision: d.decision, status: d.decision === 'approve' ? 'RUNNING' : 'CANCELLED' };
    },
    {
      validator: (d) => {
        if (decision)
          throw ApplicationFailure.nonRetryable(
            `this deploy was already ${decision.decision === 'approve' ? 'approved' : 'rejected'} by ${decision.username}`,
            'AlreadyDecided',
          );
        if (!waiting) throw ApplicationFailure.nonRetryable('this deploy is not waiting for approval', 'NotAwaitingApproval');
        if (input.approval.requestedBy !== null && d.userId === input.approval.requestedBy)
          throw ApplicationFailure.nonRetryable(
            'the requester of a deploy cannot approve or reject it: another person must',
            'SelfApproval',
          );
      },
    },
  );

  return runAsTask(async () => {
    const result: GitDeployResult = {
      dashboard_uuid: input.dashboardUuid,
      commit: input.commit,
      target_env_id: input.targetEnvId,
      approval: { required: input.approval.required, decision: null, by: null, comment: null },
      items: [],
      not_started: 1,
      cancelled: false,
      next_actions: [],
    };
    if (input.approval.required) {
      waiting = true;
      await bookkeeping.setTaskAwaitingApproval({ waiting: true });
      log.info(
        `waiting up to ${input.approval.timeoutSeconds}s for another person to approve deploying ${input.commit.slice(0, 10)} into a protected environment`,
      );
      const decided = await condition(() => decision !== undefined, `${input.approval.timeoutSeconds}s`);
      waiting = false;
      if (!decided || !decision) {
        result.approval.decision = 'timeout';
        result.cancelled = true;
        return endTaskWithResult(
          'CANCELLED',
          result,
          `no approval within ${input.approval.timeoutSeconds}s: the approval window ran out; nothing was deployed`,
          'ApprovalTimeout',
        );
      }
      result.approval = { required: true, decision: decision.decision, by: decision.username, comment: decision.comment ?? null };
      if (decision.decision === 'reject') {
        result.cancelled = true;
        return endTaskWithResult(
          'CANCELLED',
          result,
          `rejected by ${decision.username}${decision.comment ? `: ${decision.comment}` : ''}; nothing was deployed`,
          'ApprovalRejected',
        );
      }
      log.info(`approved by ${decision.username}`);
      await bookkeeping.setTaskAwaitingApproval({ waiting: false });
    }

    // Once the import starts it runs to the end and is recorded.
    const item = await CancellationScope.nonCancellable(async () => {
      await reportTaskProgress({ done: 0, total: 1, message: `deploying ${input.commit.slice(0, 10)}` });
      let it: GitDeployItem & { chart_uuids?: string[] };
      try {
        it = await deploy.deployDashboardCommit(input);
      } catch (err) {
        it = {
          kind: 'repository',
          id: input.dashboardUuid,
          title: null,
          status: 'failed',
          outcome: 'failed',
          step: 'import',
          error: failureMessage(err),
          next_actions: [],
          dashboard_uuid: input.dashboardUuid,
          commit: input.commit,
          target_env_id: input.targetEnvId,
          target_dashboard_id: null,
        };
      }
      if (it.status === 'deployed' && it.target_dashboard_id !== null) {
        const v = await deploy.verifyMigratedDashboard({
          targetEnvId: input.targetEnvId,
          dashboardId: it.target_dashboard_id,
          expectedChartUuids: it.chart_uuids ?? [],
        });
        it.verification = v;
        if (!v.ok) {
          it.status = 'deployed_with_errors';
          it.outcome = 'failed';
          it.step = 'verify';
          it.error = `deployed, but verification failed: ${v.charts_linked}/${v.charts_expected} charts linked, ${v.charts.filter((c) => !c.ok).length} chart queries fail`;
        }
        await deploy.recordGitDeployment({
          dashboardUuid: input.dashboardUuid,
          envId: input.targetEnvId,
          commit: input.commit,
          targetDashboardId: it.target_dashboard_id,
          deployedBy: input.approval.requestedBy,
          approvedBy: result.approval.by,
        });
      }
      delete it.chart_uuids;
      await reportTaskProgress({ done: 1, total: 1, message: it.status });
      return it as GitDeployItem;
    });
    result.items = [item];
    result.not_started = 0;
    if (item.outcome !== 'succeeded')
      return endTaskWithResult('FAILED', result, `deploy of ${input.commit.slice(0, 10)} failed: ${item.error}`, 'DeployFailed');
    log.info(`dashboard ${input.dashboardUuid} at ${input.commit.slice(0, 10)} is live as dashboard ${item.target_dashboard_id}`);
    return result;
  });
}

function failureMessage(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  return cause instanceof Error ? cause.message : String(cause);
}
