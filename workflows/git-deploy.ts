import { ActivityFailure, CancellationScope, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { GitDeployInput, GitDeployItem, GitDeployResult } from '../contracts/git.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

const deploy = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 4 },
});

/** The browser check (`verification: "browser"`): one dashboard, within its time budget. */
const browser = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '20 seconds', maximumAttempts: 2 },
});

/**
 * Deploys a dashboard's repository at a pinned commit into an environment. Into a protected
 * environment it first waits (AWAITING_APPROVAL) for another person's decision (runAsTask's gate);
 * a rejection or a window that runs out ends the task CANCELLED with the reason, and nothing is
 * deployed.
 */
export async function gitDeployWorkflow(input: GitDeployInput): Promise<GitDeployResult> {
  const gate = {
    approval: input.approval,
    what: `deploying ${input.commit.slice(0, 10)}`,
    onDenied: () => commentOnPullRequest(input, null),
  };
  return runAsTask(
    async (approval) => {
      const result = notStartedResult(input, approval);
      // Once the import starts it runs to the end and is recorded.
      const item = await CancellationScope.nonCancellable(async () => {
        await reportTaskProgress({ done: 0, total: 1, message: `deploying ${input.commit.slice(0, 10)}` });
        let it: GitDeployItem & { chart_uuids?: string[] };
        try {
          it = await deploy.deployDashboardCommit(input);
        } catch (err) {
          it = failedItem(input, err);
        }
        // Deployed, though a companion may not have been written: verified and recorded all the same.
        const deployed = it.status === 'deployed' || (it.status === 'deployed_with_errors' && it.step === 'companions');
        if (deployed && it.target_dashboard_id !== null) {
          const v = await deploy.verifyMigratedDashboard({
            targetEnvId: input.targetEnvId,
            dashboardId: it.target_dashboard_id,
            expectedChartUuids: it.chart_uuids ?? [],
          });
          withVerification(it, v);
          if (input.verification === 'browser') {
            // Beside the dashboard in the environment the request named, when that is not the target itself.
            const source = input.envId !== input.targetEnvId ? { envId: input.envId, dashboardId: input.dashboardId } : undefined;
            const b = await browser.browserCheckDashboard({
              targetEnvId: input.targetEnvId,
              dashboardId: it.target_dashboard_id,
              ...(source ? { source } : {}),
            });
            withBrowserCheck(it, v, b);
          }
          await deploy.recordGitDeployment(deploymentOf(input, it.target_dashboard_id, result.approval.by));
        }
        delete it.chart_uuids;
        await reportTaskProgress({ done: 1, total: 1, message: it.status });
        return it as GitDeployItem;
      });
      result.items = [item];
      result.not_started = 0;
      await commentOnPullRequest(input, item);
      if (item.outcome !== 'succeeded')
        return endTaskWithResult('FAILED', result, `deploy of ${input.commit.slice(0, 10)} failed: ${item.error}`, 'DeployFailed');
      log.info(`dashboard ${input.dashboardUuid} at ${input.commit.slice(0, 10)} is live as dashboard ${item.target_dashboard_id}`);
      return result;
    },
    { gate },
  );
}

/** The task's result before the deploy: its one item not started yet. */
function notStartedResult(input: GitDeployInput, approval: GitDeployResult['approval']): GitDeployResult {
  return {
    dashboard_uuid: input.dashboardUuid,
    commit: input.commit,
    target_env_id: input.targetEnvId,
    approval,
    items: [],
    not_started: 1,
    cancelled: false,
    next_actions: [],
  };
}

type Verification = Awaited<ReturnType<Activities['verifyMigratedDashboard']>>;
type BrowserCheck = Awaited<ReturnType<Activities['browserCheckDashboard']>>;

/** The deployed dashboard's verification on its item; one that failed makes the deploy `deployed_with_errors`. */
function withVerification(it: GitDeployItem, v: Verification): void {
  it.verification = v;
  if (!v.ok) {
    it.status = 'deployed_with_errors';
    it.outcome = 'failed';
    it.step = 'verify';
    it.error = `deployed, but verification failed: ${v.charts_linked}/${v.charts_expected} charts linked, ${v.charts.filter((c) => !c.ok).length} chart queries fail`;
  }
}

/** The browser check beside the verification; a failed one fails a deploy that had none of its own. */
function withBrowserCheck(it: GitDeployItem, v: Verification, b: BrowserCheck): void {
  it.verification = { ...v, browser: b, ...(b.verdict === 'failed' ? { ok: false } : {}) };
  if (b.verdict === 'failed' && it.status === 'deployed') {
    it.status = 'deployed_with_errors';
    it.outcome = 'failed';
    it.step = 'verify';
    it.error = `deployed, but the browser check failed: ${b.reason}`;
  }
}

/** What the repository records of a deploy: who asked for it (the requester, else the gate's requester) and who approved it. */
function deploymentOf(input: GitDeployInput, targetDashboardId: number, approvedBy: string | null) {
  return {
    dashboardUuid: input.dashboardUuid,
    envId: input.targetEnvId,
    commit: input.commit,
    targetDashboardId,
    deployedBy: input.requestedBy ?? input.approval?.requestedBy ?? null,
    approvedBy,
  };
}

/** The item of a deploy whose activity failed past its retries. */
function failedItem(input: GitDeployInput, err: unknown): GitDeployItem {
  const { dashboardUuid, commit, targetEnvId } = input;
  const base = { kind: 'repository', id: dashboardUuid, title: null, status: 'failed', outcome: 'failed', step: 'import' } as const;
  return {
    ...base,
    error: failureMessage(err),
    next_actions: [],
    dashboard_uuid: dashboardUuid,
    commit,
    target_env_id: targetEnvId,
    target_dashboard_id: null,
  };
}

/**
 * A merge's deploy tells its pull request how it ended (null: not approved, nothing deployed). The
 * comment is a courtesy: the provider refusing it leaves the deploy's own outcome as it is.
 */
async function commentOnPullRequest(input: GitDeployInput, item: GitDeployItem | null): Promise<void> {
  if (!input.pullRequestId || !input.linkBase) return;
  const { pullRequestId, linkBase } = input;
  try {
    await CancellationScope.nonCancellable(() =>
      item
        ? deploy.commentDeployResult({ pullRequestId, linkBase, item })
        : deploy.commentPullRequest({
            pullRequestId,
            body: `Switchyard did not deploy \`${input.commit.slice(0, 10)}\`: the deploy was not approved (rejected, or its approval window ran out).`,
          }),
    );
  } catch (err) {
    log.warn(`the pull request could not be told the deploy's result: ${failureMessage(err)}`);
  }
}

function failureMessage(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  return cause instanceof Error ? cause.message : String(cause);
}
