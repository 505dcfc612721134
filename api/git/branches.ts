/**
 * A dashboard repository's branches: list (with the pull request open from each), create,
 * switch, delete, and "onto a branch" for sync and commit. Each holds the repository's lock.
 */
import type { GitReviewStore } from '../../db/git/reviews.ts';
import type { Logger } from '../../lib/logger.ts';
import type { GitService } from './service.ts';

export class GitBranches {
  private readonly git: GitService;
  private readonly reviews: GitReviewStore;
  private readonly logger: Logger;

  constructor(git: GitService, reviews: GitReviewStore, logger: Logger) {
    this.git = git;
    this.reviews = reviews;
    this.logger = logger.child({ component: 'git-branches' });
  }

  async list(envId: string, dashboardId: number) {
    const { uuid, wc } = await this.git.repository(envId, dashboardId);
    const [branches, current] = await this.git.repos.withLock(
      [uuid],
      'shared',
      async () => [await wc.listBranches(), await wc.branch()] as const,
    );
    const open = await this.reviews.pullRequests(uuid, 'open');
    const items = branches.map((b) => {
      const pr = open.find((p) => p.head_branch === b.name);
      return { ...b, pull_request: pr ? { number: pr.number, url: pr.url, state: pr.state } : null };
    });
    return { current, items };
  }

  async create(envId: string, dashboardId: number, body: { name: string; from?: string; checkout: boolean }) {
    const { uuid, wc } = await this.git.repository(envId, dashboardId);
    return this.git.repos.withLock([uuid], 'exclusive', async () => {
      const from = body.from ? await wc.resolveCommit(body.from) : null;
      const commit = await wc.createBranch(body.name, from, body.checkout);
      this.logger.info({ dashboard_uuid: uuid, branch: body.name, commit, checkout: body.checkout }, 'branch created');
      return { name: body.name, commit, current: body.checkout ? body.name : await wc.branch() };
    });
  }

  async switchTo(envId: string, dashboardId: number, name: string) {
    const { uuid, wc } = await this.git.repository(envId, dashboardId);
    const head = await this.git.repos.withLock([uuid], 'exclusive', () => wc.switchBranch(name));
    this.logger.info({ dashboard_uuid: uuid, branch: name, head }, 'branch switched');
    return { branch: name, head };
  }

  async remove(envId: string, dashboardId: number, name: string) {
    const { uuid, wc } = await this.git.repository(envId, dashboardId);
    await this.git.repos.withLock([uuid], 'exclusive', () => wc.deleteBranch(name));
    this.logger.info({ dashboard_uuid: uuid, branch: name }, 'branch deleted');
    return { branch: name, deleted: true as const };
  }

  /** Before a sync or commit "onto" a branch: the current one stays; another is switched to; a new one is made at HEAD. */
  async onto(envId: string, dashboardId: number, name: string | undefined): Promise<void> {
    if (!name) return;
    const { uuid, wc } = await this.git.repository(envId, dashboardId);
    await this.git.repos.withLock([uuid], 'exclusive', async () => {
      if ((await wc.branch()) === name) return;
      if ((await wc.listBranches()).some((b) => b.name === name)) await wc.switchBranch(name);
      else await wc.createBranch(name, null, true);
    });
  }
}
