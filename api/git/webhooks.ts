/**
 * A git config's provider webhook: its secret (write-only, encrypted, db/git/reviews.ts) and the
 * person it acts as, and each delivery: signed with the secret (compared in constant time) or
 * 401; taken once by its delivery id (stored) or 409; a merged pull request Switchyard opened
 * starts the pinned deploy of its merge commit into the pull request's target, as that person
 * with their rights at that moment, through the approval gate when the target is protected.
 */
import { holds } from '../../contracts/permissions.ts';
import type { GitPullRequestRow } from '../../db/git/reviews.ts';
import { AppError, ForbiddenError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { deliveryId, parseEvent, signatureValid, type MergeEvent } from '../../lib/git/webhooks.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { gitDeployInput } from './input.ts';
import type { PullRequests } from './pull-requests.ts';
import { WEBHOOK_SECRET_MASK } from './review-schemas.ts';
import { deployBody } from './schemas.ts';

type Headers = Record<string, string | string[] | undefined>;
export type WebhookAnswer = { outcome: 'deploying' | 'ignored'; reason?: string; task_id?: string; pull_request?: number };

const webhookPath = (configId: string) => `/api/git/webhooks/${configId}`;

export class GitWebhooks {
  private readonly app: AppContext;
  private readonly prs: PullRequests;
  private readonly logger: Logger;

  constructor(app: AppContext, prs: PullRequests) {
    this.app = app;
    this.prs = prs;
    this.logger = app.logger.child({ component: 'git-webhooks' });
  }

  private get store() {
    return this.app.stores.gitReviews;
  }

  async view(configId: string) {
    await this.app.git.configs.get(configId);
    const hook = await this.store.webhook(configId);
    const owner = hook ? await this.app.stores.identity.users.byId(hook.owner_id) : undefined;
    return {
      config_id: configId,
      configured: !!hook,
      secret: hook ? WEBHOOK_SECRET_MASK : null,
      owner: owner?.username ?? null,
      url: webhookPath(configId),
    };
  }

  async set(principal: Principal, configId: string, secret: string) {
    await this.app.git.configs.get(configId);
    await this.store.setWebhook(configId, secret, principal.userId);
    this.logger.info({ config_id: configId, owner: principal.username }, 'git webhook set');
    return this.view(configId);
  }

  async remove(configId: string) {
    await this.app.git.configs.get(configId);
    if (!(await this.store.removeWebhook(configId))) throw new NotFoundError('Webhook of git config', configId);
    return { config_id: configId, deleted: true as const };
  }

  /** One delivery: verified, taken once, and acted on (see the module's comment). */
  async deliver(configId: string, headers: Headers, rawBody: string | undefined, body: unknown, linkBase: string): Promise<WebhookAnswer> {
    const config = await this.app.git.configs.find(configId);
    const hook = config ? await this.store.webhook(configId) : undefined;
    if (!config || !hook) throw new NotFoundError('Webhook of git config', configId);
    if (rawBody === undefined || !signatureValid(config.provider, headers, rawBody, this.store.secret(hook))) {
      this.logger.warn({ config_id: configId }, 'git webhook delivery refused: not signed with the secret');
      throw new AppError(
        401,
        'invalid_signature',
        'Invalid signature',
        "The delivery is not signed with this config's webhook secret; nothing was done",
      );
    }
    const id = deliveryId(config.provider, headers);
    if (!id) throw new ValidationError('The delivery has no delivery id header', [{ field: 'header', message: 'delivery id required' }]);
    if (!(await this.store.recordDelivery(configId, id, 'received'))) {
      this.logger.warn({ config_id: configId, delivery_id: id }, 'git webhook delivery replayed');
      throw new AppError(409, 'replayed_delivery', 'Delivery already taken', `Delivery ${id} was taken before; nothing was done`, {
        extra: { delivery_id: id },
      });
    }
    const answer = await this.act(configId, hook.owner_id, headers, body, linkBase).catch(async (err: unknown) => {
      await this.store.settleDelivery(configId, id, `failed: ${err instanceof Error ? err.message.slice(0, 300) : String(err)}`, null);
      throw err;
    });
    await this.store.settleDelivery(
      configId,
      id,
      answer.reason ? `${answer.outcome}: ${answer.reason}` : answer.outcome,
      answer.task_id ?? null,
    );
    this.logger.info({ config_id: configId, delivery_id: id, ...answer }, 'git webhook delivery');
    return answer;
  }

  private async act(configId: string, ownerId: string, headers: Headers, body: unknown, linkBase: string): Promise<WebhookAnswer> {
    const config = await this.app.git.configs.get(configId);
    const event = parseEvent(config.provider, headers, body);
    if (event.kind === 'ignored') return { outcome: 'ignored', reason: event.reason };
    const pr = await this.store.pullRequestOf(configId, event.merge.repository, event.merge.number);
    if (!pr)
      return { outcome: 'ignored', reason: `pull request ${event.merge.number} of ${event.merge.repository} was not opened by Switchyard` };
    if (pr.deploy_task_id && pr.merge_commit === event.merge.merge_commit_sha)
      return {
        outcome: 'ignored',
        reason: `its merge is deployed already by task ${pr.deploy_task_id}`,
        task_id: pr.deploy_task_id,
        pull_request: pr.number,
      };
    const owner = await this.ownerPrincipal(ownerId);
    if ('refused' in owner) {
      await this.comment(pr, `Switchyard did not deploy this merge: ${owner.refused}.`);
      throw new ForbiddenError(`The webhook's owner may not deploy now: ${owner.refused}; nothing was done`);
    }
    const taskId = await this.deploy(owner.principal, pr, event.merge, linkBase);
    return { outcome: 'deploying', task_id: taskId, pull_request: pr.number };
  }

  /** The webhook's owner as a caller, with the roles and permissions they hold now (or why they may not deploy). */
  private async ownerPrincipal(ownerId: string): Promise<{ principal: Principal } | { refused: string }> {
    const [user, access] = await Promise.all([
      this.app.stores.identity.users.byId(ownerId),
      this.app.stores.identity.access.ofUser(ownerId),
    ]);
    if (!user || !access) return { refused: "the webhook's owner no longer exists" };
    if (!access.active) return { refused: `the webhook's owner ${user.username} is deactivated` };
    const missing = (['pull_requests:MERGE_DEPLOY', 'git:WRITE'] as const).filter((p) => !holds(access, p));
    if (missing.length) return { refused: `the webhook's owner ${user.username} lacks ${missing.join(' and ')}` };
    const principal: Principal = {
      kind: 'user',
      userId: ownerId,
      username: user.username,
      roles: access.roles,
      permissions: new Set(access.permissions),
      scopes: [],
    };
    return { principal };
  }

  /** Fetches the base branch (the merge commit with it) and starts the git_deploy task of that commit. */
  private async deploy(principal: Principal, pr: GitPullRequestRow, merge: MergeEvent, linkBase: string): Promise<string> {
    const { uuid, row, wc } = await this.app.git.repository(pr.env_id, pr.dashboard_id);
    const creds = await this.app.git.credentials(row.config_id);
    await this.app.git.repos.withLock([uuid], 'exclusive', () => wc.fetchRemoteBranch(creds, merge.base_branch));
    const body = deployBody.parse({
      env_id: pr.env_id,
      target_env_id: pr.target_env_id,
      commit: merge.merge_commit_sha,
      overwrite: true,
      verification: pr.verification,
    });
    const prepared = await this.app.git.prepareDeploy(pr.env_id, pr.dashboard_id, pr.target_env_id, merge.merge_commit_sha);
    const d = gitDeployInput(body, pr.dashboard_id, prepared, principal.userId);
    const { task } = await this.app.tasks.create({
      kind: 'git_deploy',
      input: { ...d.input, pullRequestId: pr.id, linkBase },
      params: { ...d.params, pull_request: pr.number },
      owner: principal,
    });
    await this.store.updatePullRequest(pr.id, { state: 'merged', merge_commit: merge.merge_commit_sha, deploy_task_id: task.id });
    const gate = prepared.protected ? `; ${prepared.targetName} is protected, so it waits for another person's approval` : '';
    await this.comment(
      pr,
      `Merged: Switchyard is deploying \`${merge.merge_commit_sha.slice(0, 10)}\` into **${prepared.targetName}** as ${principal.username}${gate}. [The deploy task](${linkBase.replace(/\/+$/, '')}/api/tasks/${task.id}).`,
    );
    return task.id;
  }

  /** A courtesy to the pull request: the provider refusing a comment leaves what was done as it is. */
  private async comment(pr: GitPullRequestRow, text: string): Promise<void> {
    try {
      const { provider } = await this.prs.providerOf(pr.config_id, pr.repository.split('/').slice(1).join('/'));
      await provider.comment(pr.number, text);
    } catch (err) {
      this.logger.warn({ err, number: pr.number }, 'the pull request could not be commented on');
    }
  }
}
