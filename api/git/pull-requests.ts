/**
 * Pull requests of a dashboard repository: open one from a branch (pushed first) on the config's
 * provider, refresh it when the branch moves, and the preview task (git_preview) that writes its
 * body and the `switchyard/preview` status. Who may do what is the routes' access
 * (pull_requests:OPEN / UPDATE); the provider's token is read by config id where it is used.
 */
import type { GitPullRequestRow, GitReviewStore } from '../../db/git/reviews.ts';
import { egressPolicy } from '../../lib/egress/policy.ts';
import { AppError, ConflictError } from '../../lib/errors.ts';
import { reviewProvider } from '../../lib/git/reviews.ts';
import { untilBranchesOnServer } from '../../lib/git/branch-on-server.ts';
import type { Logger } from '../../lib/logger.ts';
import { can, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { PREVIEW_BODY_MARKER as BODY_MARKER } from '../../contracts/git.ts';
import type { GitService } from './service.ts';

export function pullRequestView(r: GitPullRequestRow) {
  const {
    id,
    number,
    url,
    title,
    state,
    head_branch,
    base_branch,
    head_commit,
    target_env_id,
    preview_task_id,
    preview_state,
    merge_commit,
    deploy_task_id,
  } = r;
  return {
    id,
    number,
    url,
    title,
    state,
    head_branch,
    base_branch,
    head_commit,
    target_env_id,
    preview_task_id,
    preview_state,
    merge_commit,
    deploy_task_id,
  };
}

const noSuchPullRequest = (n: number) =>
  new AppError(404, 'unknown_pull_request', 'Unknown pull request', `Switchyard opened no pull request ${n} for this dashboard`);

/** The placeholder a body holds until the preview writes it. */
const pending = (description: string | undefined) =>
  `${description?.trim() ? `${description.trim()}\n\n` : ''}${BODY_MARKER}\n_Switchyard is writing the preview of this branch…_\n`;

export class PullRequests {
  private readonly app: AppContext;
  private readonly git: GitService;
  private readonly store: GitReviewStore;
  private readonly logger: Logger;

  constructor(app: AppContext) {
    this.app = app;
    this.git = app.git;
    this.store = app.stores.gitReviews;
    this.logger = app.logger.child({ component: 'git-pull-requests' });
  }

  /** The review provider of a repository's config and the repository's `owner/name` there. */
  async providerOf(configId: string | null, remoteName: string | null) {
    if (!configId || !remoteName) throw new ConflictError('This repository has no remote: init it with a git config first', 'no_remote');
    const config = await this.git.configs.get(configId);
    const token = this.git.configs.token(config);
    const provider = reviewProvider({
      provider: config.provider,
      baseUrl: config.base_url,
      owner: config.owner,
      repo: remoteName,
      token,
      egress: egressPolicy(this.app.config),
    });
    return { config, provider, repository: `${config.owner}/${remoteName}` };
  }

  async list(envId: string, dashboardId: number, state?: 'open' | 'closed' | 'merged') {
    const uuid = await this.git.dashboardUuid(envId, dashboardId);
    return { items: (await this.store.pullRequests(uuid, state)).map(pullRequestView) };
  }

  async get(envId: string, dashboardId: number, number: number) {
    const uuid = await this.git.dashboardUuid(envId, dashboardId);
    const row = await this.store.pullRequestByNumber(uuid, number);
    if (!row) throw noSuchPullRequest(number);
    return pullRequestView(row);
  }

  /** Pushes the branch and answers its commit (404 for a branch the repository lacks). */
  private async pushBranch(envId: string, dashboardId: number, branch: string) {
    const { uuid, row, wc } = await this.git.repository(envId, dashboardId);
    const creds = await this.git.credentials(row.config_id);
    return this.git.repos.withLock([uuid], 'exclusive', async () => {
      const local = (await wc.listBranches()).find((b) => b.name === branch);
      if (!local?.commit) throw new AppError(404, 'unknown_branch', 'Unknown branch', `This repository has no branch '${branch}'`);
      const pushed = local.commit !== local.remote_commit;
      if (pushed) {
        const r = await wc.push(creds, branch);
        this.logger.info(
          { dashboard_uuid: uuid, branch, commit: r.commit, remote_messages: r.remote_messages },
          'pull request branch pushed',
        );
      }
      return { uuid, row, commit: local.commit, pushed };
    });
  }

  async open(
    principal: Principal,
    linkBase: string,
    dashboardId: number,
    body: {
      env_id: string;
      branch: string;
      base?: string;
      title: string;
      description?: string;
      target_env_id: string;
      verification: 'queries' | 'browser';
    },
  ) {
    await this.app.environments.get(body.target_env_id);
    const { uuid, row, commit } = await this.pushBranch(body.env_id, dashboardId, body.branch);
    const base = body.base ?? row.branch;
    if (base === body.branch) throw new ConflictError(`A pull request needs a base other than its branch '${base}'`, 'same_branch');
    const existing = await this.store.openFromBranch(uuid, body.branch);
    if (existing)
      throw new ConflictError(`Pull request ${existing.number} is open from '${body.branch}' already: refresh it`, 'pull_request_exists', {
        number: existing.number,
        url: existing.url,
      });
    const { config, provider, repository } = await this.providerOf(row.config_id, row.remote_name);
    await untilBranchesOnServer(provider, [{ name: body.branch, commit }, { name: base }]);
    const opened = await provider.open({ head: body.branch, base, title: body.title, body: pending(body.description) });
    const pr = await this.store.createPullRequest({
      ...{ dashboard_uuid: uuid, config_id: config.id, repository, number: opened.number, url: opened.url, title: body.title },
      ...{ head_branch: body.branch, base_branch: base, head_commit: commit, env_id: body.env_id, dashboard_id: dashboardId },
      ...{ target_env_id: body.target_env_id, verification: body.verification, opened_by: principal.userId },
    });
    this.logger.info({ dashboard_uuid: uuid, repository, number: pr.number, by: principal.username }, 'pull request opened');
    const taskId = await this.startPreview(principal, linkBase, pr, row.synced_env_id);
    return {
      pull_request: pullRequestView(await this.store.updatePullRequest(pr.id, { preview_task_id: taskId })),
      preview_task_id: taskId,
    };
  }

  /** The branch moved (or the title or text changed): push it, write the new title or text, preview again. */
  async refresh(
    principal: Principal,
    linkBase: string,
    dashboardId: number,
    number: number,
    body: { env_id: string; title?: string; description?: string },
  ) {
    const uuid = await this.git.dashboardUuid(body.env_id, dashboardId);
    const pr = await this.store.pullRequestByNumber(uuid, number);
    if (!pr) throw noSuchPullRequest(number);
    if (pr.state !== 'open') throw new ConflictError(`Pull request ${number} is ${pr.state}`, 'pull_request_closed');
    const { row, commit, pushed } = await this.pushBranch(body.env_id, dashboardId, pr.head_branch);
    if (body.title !== undefined || body.description !== undefined) {
      const { provider } = await this.providerOf(pr.config_id, row.remote_name);
      await provider.update(number, {
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.description !== undefined ? { body: pending(body.description) } : {}),
      });
    }
    const moved = await this.store.updatePullRequest(pr.id, {
      head_commit: commit,
      ...(body.title !== undefined ? { title: body.title } : {}),
    });
    const taskId = await this.startPreview(principal, linkBase, moved, row.synced_env_id);
    return {
      pull_request: pullRequestView(await this.store.updatePullRequest(pr.id, { preview_task_id: taskId })),
      preview_task_id: taskId,
      pushed,
    };
  }

  /** After a push: the open pull request from the pushed branch is previewed again, when the pusher may update it. */
  async afterPush(
    principal: Principal,
    linkBase: string,
    envId: string,
    dashboardId: number,
  ): Promise<{ pull_request: number; preview_task_id: string } | null> {
    const { uuid, row, wc } = await this.git.repository(envId, dashboardId);
    const branch = await wc.branch();
    const pr = await this.store.openFromBranch(uuid, branch);
    if (!pr || !can(principal, 'pull_requests:UPDATE')) return null;
    const head = await wc.headOid();
    if (!head || head === pr.head_commit) return null;
    const moved = await this.store.updatePullRequest(pr.id, { head_commit: head });
    const taskId = await this.startPreview(principal, linkBase, moved, row.synced_env_id);
    await this.store.updatePullRequest(pr.id, { preview_task_id: taskId });
    return { pull_request: pr.number, preview_task_id: taskId };
  }

  private async startPreview(principal: Principal, linkBase: string, pr: GitPullRequestRow, syncedEnvId: string | null): Promise<string> {
    const input = {
      pullRequestId: pr.id,
      dashboardUuid: pr.dashboard_uuid,
      dashboardId: pr.dashboard_id,
      envId: pr.env_id,
      targetEnvId: pr.target_env_id,
      commit: pr.head_commit!,
      requestedBy: principal.userId,
      syncedEnvId,
      linkBase,
      ...(pr.verification === 'browser' ? { verification: 'browser' as const } : {}),
    };
    const params = {
      pull_request: pr.number,
      dashboard_id: pr.dashboard_id,
      env_id: pr.env_id,
      target_env_id: pr.target_env_id,
      commit: pr.head_commit,
    };
    const { task } = await this.app.tasks.create({ kind: 'git_preview', input, params, owner: principal });
    return task.id;
  }
}
