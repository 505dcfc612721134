import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { GitDeployItem, GitPreviewInput } from '../contracts/git.ts';
import type { Verification } from '../contracts/migration.ts';
import { endTaskWithResult, reportTaskProgress, runAsTask } from './task-run.ts';

const act = proxyActivities<Activities>({
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

export interface GitPreviewResult {
  pull_request_id: string;
  commit: string;
  target_env_id: string;
  verdict: 'success' | 'failure';
  plan: GitDeployItem;
  verification: Verification | null;
  planned_at: string;
  verified_at: string | null;
  /** The validator's last verdict of the target's copy, posted as `switchyard/validation` (null: none checked it). */
  validation?: { state: 'pending' | 'success' | 'failure'; validated_at: string } | null;
}

/**
 * A pull request's preview: `switchyard/preview` pending on the head commit, a dry-run deploy of
 * it into the target (nothing imported), the charts verified where the branch was synced from,
 * the body written from both, then the status success or failure. A failure of the preview
 * itself still ends with the status failure, so a pull request never keeps a pending status.
 */
export async function gitPreviewWorkflow(input: GitPreviewInput): Promise<GitPreviewResult> {
  const status = (state: 'pending' | 'success' | 'failure', description: string) =>
    act.setPreviewStatus({ pullRequestId: input.pullRequestId, commit: input.commit, state, description, linkBase: input.linkBase });
  return runAsTask(async () => {
    await status('pending', `previewing ${input.commit.slice(0, 10)}`);
    try {
      const r = await preview(input);
      await act.publishPreview({
        preview: input,
        plan: r.plan,
        plannedAt: r.planned_at,
        verification: r.verification,
        verifiedAt: r.verified_at,
      });
      await status(r.verdict, r.verdict === 'success' ? 'the deploy plans cleanly and the charts pass' : failureLine(r));
      // Beside the preview, what the validator last found of the copy this change replaces (when it checked one).
      if (r.plan.target_dashboard_id !== null)
        r.validation = await act.setValidationStatus({
          pullRequestId: input.pullRequestId,
          commit: input.commit,
          targetEnvId: input.targetEnvId,
          targetDashboardId: r.plan.target_dashboard_id,
          linkBase: input.linkBase,
        });
      if (r.verdict === 'failure')
        return await endTaskWithResult('FAILED', r, `preview of ${input.commit.slice(0, 10)}: ${failureLine(r)}`, 'PreviewFailed');
      return r;
    } catch (err) {
      if (err instanceof ApplicationFailure && err.type === 'PreviewFailed') throw err;
      await CancellationScope.nonCancellable(() => status('failure', `the preview could not run: ${messageOf(err)}`));
      throw err;
    }
  });
}

async function preview(input: GitPreviewInput): Promise<GitPreviewResult> {
  await reportTaskProgress({ done: 0, total: 2, message: 'planning the deploy' });
  const plannedAt = new Date().toISOString();
  const plan = (await act.deployDashboardCommit({
    dashboardUuid: input.dashboardUuid,
    dashboardId: input.dashboardId,
    envId: input.envId,
    targetEnvId: input.targetEnvId,
    commit: input.commit,
    overwrite: true,
    dbMappings: [],
    requestedBy: input.requestedBy,
    dryRun: true,
    ...(input.syncedEnvId !== undefined ? { syncedEnvId: input.syncedEnvId } : {}),
    ...(input.frozen ? { frozen: input.frozen } : {}),
  })) as GitDeployItem & { chart_uuids?: string[] };
  let verification: Verification | null = null;
  let verifiedAt: string | null = null;
  if (plan.outcome === 'succeeded') {
    await reportTaskProgress({ done: 1, total: 2, message: 'verifying the charts' });
    verification = await act.verifyMigratedDashboard({
      targetEnvId: input.envId,
      dashboardId: input.dashboardId,
      expectedChartUuids: plan.chart_uuids ?? [],
    });
    if (input.verification === 'browser') {
      const b = await browser.browserCheckDashboard({ targetEnvId: input.envId, dashboardId: input.dashboardId });
      verification = { ...verification, browser: b, ...(b.verdict === 'failed' ? { ok: false } : {}) };
    }
    verifiedAt = new Date().toISOString();
  }
  delete plan.chart_uuids;
  await reportTaskProgress({ done: 2, total: 2, message: plan.status });
  const ok = plan.outcome === 'succeeded' && verification?.ok === true;
  const result = { pull_request_id: input.pullRequestId, commit: input.commit, target_env_id: input.targetEnvId, plan, verification };
  return { ...result, verdict: ok ? 'success' : 'failure', planned_at: plannedAt, verified_at: verifiedAt };
}

function failureLine(r: GitPreviewResult): string {
  if (r.plan.outcome !== 'succeeded') return `the deploy would fail at ${r.plan.step ?? '?'}: ${r.plan.error ?? ''}`;
  const v = r.verification;
  return v ? `${v.charts.filter((c) => !c.ok).length} of ${v.charts.length} chart queries fail` : 'not verified';
}

function messageOf(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  return cause instanceof Error ? cause.message : String(cause);
}
