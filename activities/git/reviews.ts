/**
 * The review loop's activities: the commit status of a pull request's head commit, its body
 * written from the preview, and comments (a merge's deploy and its result). Each reads the pull
 * request's row and its config's token by id (never in the workflow), and is safe to repeat:
 * a status of one context on one commit replaces the last, a body is replaced whole.
 */
import { PREVIEW_STATUS_CONTEXT, VALIDATION_STATUS_CONTEXT, type GitDeployItem, type GitPreviewInput } from '../../contracts/git.ts';
import type { Verification } from '../../contracts/migration.ts';
import { egressPolicy } from '../../lib/egress/policy.ts';
import { reviewProvider, type StatusState } from '../../lib/git/reviews.ts';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps.ts';
import { currentTaskId } from '../task-context.ts';
import { ownText, previewBody } from './preview-body.ts';

type Deps = Pick<ActivityDeps, 'stores' | 'config'>;

async function reviewOf(deps: Deps, pullRequestId: string) {
  const row = await deps.stores.gitReviews.pullRequest(pullRequestId);
  if (!row) throw new Error(`pull request ${pullRequestId} is no longer recorded`);
  const config = await deps.stores.gitConfigs.get(row.config_id);
  const [owner, ...rest] = row.repository.split('/');
  const provider = reviewProvider({
    provider: config.provider,
    baseUrl: config.base_url,
    owner,
    repo: rest.join('/'),
    token: deps.stores.gitConfigs.token(config),
    egress: egressPolicy(deps.config),
  });
  return { row, provider };
}

export const taskLink = (linkBase: string, taskId: string) => `${linkBase.replace(/\/+$/, '')}/api/tasks/${taskId}`;

/** Posts `switchyard/preview` on the commit: pending, success or failure, linking to this task. */
export async function setPreviewStatus(
  deps: Deps,
  input: { pullRequestId: string; commit: string; state: StatusState; description: string; linkBase: string },
): Promise<void> {
  const { provider } = await reviewOf(deps, input.pullRequestId);
  const description = input.description.slice(0, 140);
  const target_url = taskLink(input.linkBase, currentTaskId());
  try {
    await provider.setStatus(input.commit, { context: PREVIEW_STATUS_CONTEXT, state: input.state, description, target_url });
  } catch (err) {
    Context.current().log.error(
      `posting ${PREVIEW_STATUS_CONTEXT} ${input.state} on ${input.commit.slice(0, 10)} failed: ${(err as Error).stack ?? String(err)}`,
    );
    throw err;
  }
  await deps.stores.gitReviews.updatePullRequest(input.pullRequestId, { preview_state: input.state, preview_task_id: currentTaskId() });
}

/**
 * Posts `switchyard/validation` on the commit: the content validator's last verdict of the
 * dashboard in the pull request's target (its copy there, as the last validation found it), linking
 * to that validation. Nothing when no validation checked it. Passed is success, broken is failure;
 * a verdict that proves neither (not verifiable) is pending, never a success it did not check.
 */
export async function setValidationStatus(
  deps: Deps,
  input: { pullRequestId: string; commit: string; targetEnvId: string; targetDashboardId: number; linkBase: string },
): Promise<{ state: StatusState; validated_at: string } | null> {
  const last = await deps.stores.validationVerdicts.dashboard(input.targetEnvId, input.targetDashboardId);
  if (!last) return null;
  const { provider } = await reviewOf(deps, input.pullRequestId);
  const target = await deps.stores.environments.get(input.targetEnvId);
  const when = last.checked_at.slice(0, 16).replace('T', ' ');
  const [state, said]: [StatusState, string] =
    last.verdict === 'passed'
      ? ['success', 'every chart passed']
      : last.verdict === 'broken'
        ? ['failure', `broken since ${(last.first_seen_broken_at ?? last.checked_at).slice(0, 16).replace('T', ' ')}`]
        : ['pending', 'not verifiable: validate it again'];
  const description = `${target.name}'s copy, validated ${when} UTC: ${said}`.slice(0, 140);
  const target_url = last.task_id ? taskLink(input.linkBase, last.task_id) : undefined;
  await provider.setStatus(input.commit, { context: VALIDATION_STATUS_CONTEXT, state, description, target_url: target_url ?? null });
  return { state, validated_at: last.checked_at };
}

/** Writes the preview into the pull request's body (the person's own text before it kept). */
export async function publishPreview(
  deps: Deps,
  input: { preview: GitPreviewInput; plan: GitDeployItem; plannedAt: string; verification: Verification | null; verifiedAt: string | null },
): Promise<{ url: string }> {
  const { preview } = input;
  const { row, provider } = await reviewOf(deps, preview.pullRequestId);
  const [target, source] = await Promise.all([
    deps.stores.environments.get(preview.targetEnvId),
    deps.stores.environments.get(preview.envId),
  ]);
  const taskId = currentTaskId();
  const current = await provider.get(row.number);
  const body = previewBody(ownText(current.body), {
    commit: preview.commit,
    targetName: target.name,
    sourceName: source.name,
    dashboardId: preview.dashboardId,
    taskUrl: taskLink(preview.linkBase, taskId),
    screenshotUrl: (id) => `${taskLink(preview.linkBase, taskId)}/screenshots/${id}`,
    plannedAt: input.plannedAt,
    plan: input.plan,
    verification: input.verification,
    verifiedAt: input.verifiedAt,
  });
  await provider.update(row.number, { body });
  await deps.stores.gitReviews.updatePullRequest(row.id, { head_commit: preview.commit, state: current.state });
  return { url: row.url };
}

/** Comments on the pull request (a merge's deploy started, its result). */
export async function commentPullRequest(deps: Deps, input: { pullRequestId: string; body: string }): Promise<void> {
  const { row, provider } = await reviewOf(deps, input.pullRequestId);
  await provider.comment(row.number, input.body);
}

/** The comment a merge's deploy leaves when it ends: its status, where it went and what to look at. */
export function deployResultComment(item: GitDeployItem, taskUrl: string): string {
  const ok = item.outcome === 'succeeded';
  const head = ok
    ? `Switchyard deployed \`${item.commit.slice(0, 10)}\` as dashboard ${item.target_dashboard_id}: **${item.status}**.`
    : `Switchyard's deploy of \`${item.commit.slice(0, 10)}\` **failed** at step \`${item.step ?? '?'}\`: ${item.error ?? 'no reason given'}`;
  const v = item.verification as Verification | undefined;
  const verified = v
    ? ` Verification: ${v.charts_linked}/${v.charts_expected} charts linked, ${v.charts.filter((c) => c.ok).length}/${v.charts.length} chart queries pass.`
    : '';
  return `${head}${verified} [The deploy task](${taskUrl}).`;
}

/** Comments a merge's deploy result on its pull request (the workflow calls it once the deploy ended). */
export async function commentDeployResult(
  deps: Deps,
  input: { pullRequestId: string; linkBase: string; item: GitDeployItem },
): Promise<void> {
  const { row, provider } = await reviewOf(deps, input.pullRequestId);
  await provider.comment(row.number, deployResultComment(input.item, taskLink(input.linkBase, currentTaskId())));
}
