/**
 * Dashboards reviewed like code: branches of a dashboard repository, pull requests with their
 * preview, a config's webhook and the provider's deliveries (docs/git.md, "The review loop").
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute, type ResponseSpec } from '../http/routes.ts';
import { GitBranches } from './branches.ts';
import { PullRequests } from './pull-requests.ts';
import {
  branchCreate,
  branchDeleted,
  branchList,
  branchParams,
  branchSwitched,
  previewStarted,
  pullRequestCreate,
  pullRequestList,
  pullRequestOpened,
  pullRequestParams,
  pullRequestQuery,
  pullRequestRefresh,
  pullRequestView,
  webhookAnswer,
  webhookParams,
  webhookSet,
  webhookView,
} from './review-schemas.ts';
import { configIdParams, dashboardParams, envBody, envQuery } from './schemas.ts';
import { GitWebhooks } from './webhooks.ts';

const TAG = 'Git';
const READ = { permission: 'git:READ' } as const;
const WRITE = { permission: 'git:WRITE' } as const;
const noRepo: ResponseSpec = { description: 'Unknown environment or dashboard; `no_repository`; or `unknown_branch`' };
const upstream: ResponseSpec = { description: "The environment's Superset, or the git server, is unavailable" };
const provider: ResponseSpec = { description: "Invalid request, or `git_provider_error` with the provider's reason" };

/** Where links in a pull request point: the Switchyard the request came to (this Koa answers `ctx.origin` as null). */
export const linkBase = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;

/** The body exactly as the provider sent it (the signature is over these bytes); koa-body keeps it for the webhook path (app.ts). */
const rawBody = (ctx: Context): string | undefined => {
  const raw = (ctx.request as { rawBody?: unknown }).rawBody ?? (ctx.req as { rawBody?: unknown }).rawBody;
  return typeof raw === 'string' ? raw : undefined;
};

export function gitReviewRoutes(app: AppContext): AnyRoute[] {
  const branches = new GitBranches(app.git, app.stores.gitReviews, app.logger);
  const prs = new PullRequests(app);
  const hooks = new GitWebhooks(app, prs);
  const dash = (p: string) => `/api/git/dashboards/:dashboard_id/${p}`;
  return [
    defineRoute({
      method: 'get',
      path: dash('branches'),
      tag: TAG,
      summary: "The dashboard repository's branches",
      description:
        "Each local branch with its commit, the remote's commit as of the last fetch or push, and the pull request open from it.",
      access: READ,
      params: dashboardParams,
      query: envQuery,
      responses: { 200: { description: 'The branches', schema: branchList }, 404: noRepo, 503: upstream },
      handler: (_ctx, { params, query }) => branches.list(query.env_id, params.dashboard_id),
    }),
    defineRoute({
      method: 'post',
      path: dash('branches'),
      tag: TAG,
      summary: 'Create a branch',
      description:
        'At `from` (default HEAD) and, with `checkout` (the default), switched to: made at HEAD, local changes come along; made elsewhere, the working tree must be clean.',
      access: WRITE,
      params: dashboardParams,
      body: branchCreate,
      responses: {
        201: { description: 'Created', schema: z.object({ name: z.string(), commit: z.string(), current: z.string() }) },
        400: { description: 'Invalid request or branch name' },
        404: { description: 'Unknown environment, dashboard, repository or `from` (`unknown_ref`)' },
        409: { description: '`branch_exists`, `dirty_working_copy`, `merge_in_progress`, `no_commit` or `unsafe_path`' },
        503: upstream,
      },
      async handler(ctx, { params, body }) {
        ctx.status = 201;
        ctx.body = await branches.create(body.env_id, params.dashboard_id, body);
      },
    }),
    defineRoute({
      method: 'post',
      path: dash('branches/:branch/switch'),
      tag: TAG,
      summary: 'Switch to a branch',
      description:
        "Refused while anything is changed or a merge is in progress (409), so no work is lost; the branch's tree is checked like a fetched one (`unsafe_path`).",
      access: WRITE,
      params: branchParams,
      body: envBody,
      responses: {
        200: { description: 'Switched', schema: branchSwitched },
        404: noRepo,
        409: { description: '`dirty_working_copy`, `merge_in_progress` or `unsafe_path`' },
        503: upstream,
      },
      handler: (_ctx, { params, body }) => branches.switchTo(body.env_id, params.dashboard_id, params.branch),
    }),
    defineRoute({
      method: 'delete',
      path: dash('branches/:branch'),
      tag: TAG,
      summary: 'Delete a local branch',
      description: "Never the current branch (409 `current_branch`). The remote's branch stays.",
      access: WRITE,
      params: branchParams,
      query: envQuery,
      responses: {
        200: { description: 'Deleted', schema: branchDeleted },
        404: noRepo,
        409: { description: '`current_branch`' },
        503: upstream,
      },
      handler: (_ctx, { params, query }) => branches.remove(query.env_id, params.dashboard_id, params.branch),
    }),
    defineRoute({
      method: 'get',
      path: dash('pull-requests'),
      tag: TAG,
      summary: 'Pull requests Switchyard opened for the dashboard',
      description: 'Newest first, with the last preview task and status, and the deploy a merge started.',
      access: READ,
      params: dashboardParams,
      query: pullRequestQuery,
      responses: { 200: { description: 'The pull requests', schema: pullRequestList }, 404: noRepo, 503: upstream },
      handler: (_ctx, { params, query }) => prs.list(query.env_id, params.dashboard_id, query.state),
    }),
    defineRoute({
      method: 'post',
      path: dash('pull-requests'),
      tag: TAG,
      summary: 'Open a pull request from a branch',
      description:
        'Pushes the branch, opens the pull request on the provider and starts its `git_preview` task (a dry-run deploy into `target_env_id`). Details: docs/git.md#post-apigitdashboardsdashboard_idpull-requests.',
      access: { permission: 'pull_requests:OPEN' },
      params: dashboardParams,
      body: pullRequestCreate,
      responses: {
        201: { description: 'Opened; the preview runs', schema: pullRequestOpened },
        400: provider,
        404: noRepo,
        409: {
          description:
            "`pull_request_exists` (refresh it), `same_branch`, `no_remote`, `push_rejected`, `branch_not_on_server` (the server's API did not answer the pushed branch in time)",
        },
        503: upstream,
      },
      async handler(ctx, { params, body, principal }) {
        ctx.status = 201;
        ctx.body = await prs.open(principal, linkBase(ctx), params.dashboard_id, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: dash('pull-requests/:number'),
      tag: TAG,
      summary: 'One pull request',
      access: READ,
      params: pullRequestParams,
      query: envQuery,
      responses: {
        200: { description: 'The pull request', schema: pullRequestView },
        404: { description: 'Unknown dashboard or `unknown_pull_request`' },
        503: upstream,
      },
      handler: (_ctx, { params, query }) => prs.get(query.env_id, params.dashboard_id, params.number),
    }),
    defineRoute({
      method: 'post',
      path: dash('pull-requests/:number/refresh'),
      tag: TAG,
      summary: 'Refresh a pull request',
      description:
        'Pushes its branch when it moved, writes a new `title` or `description` when sent, and previews the head commit again (body and status). A push of the branch does the same by itself.',
      access: { permission: 'pull_requests:UPDATE' },
      params: pullRequestParams,
      body: pullRequestRefresh,
      responses: {
        202: { description: 'The preview runs', schema: previewStarted },
        400: provider,
        404: { description: 'Unknown dashboard or `unknown_pull_request`' },
        409: { description: '`pull_request_closed` or `push_rejected`' },
        503: upstream,
      },
      async handler(ctx, { params, body, principal }) {
        ctx.status = 202;
        ctx.body = await prs.refresh(principal, linkBase(ctx), params.dashboard_id, params.number, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/git/configs/:config_id/webhook',
      tag: TAG,
      summary: "A git config's webhook",
      description: 'Whether it is set, whom it acts as and where the provider delivers; the secret is never answered (`********`).',
      access: READ,
      params: configIdParams,
      responses: { 200: { description: 'The webhook', schema: webhookView }, 404: { description: 'Unknown config' } },
      handler: (_ctx, { params }) => hooks.view(params.config_id),
    }),
    defineRoute({
      method: 'put',
      path: '/api/git/configs/:config_id/webhook',
      tag: TAG,
      summary: "Set a git config's webhook secret",
      description:
        'The secret is stored encrypted and never answered. Deliveries then act as you, with the rights you hold when each arrives: a merged pull request Switchyard opened deploys its merge commit.',
      access: { permission: 'pull_requests:MERGE_DEPLOY' },
      params: configIdParams,
      body: webhookSet,
      responses: { 200: { description: 'Set', schema: webhookView }, 404: { description: 'Unknown config' } },
      handler: (_ctx, { params, body, principal }) => hooks.set(principal, params.config_id, body.secret),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/git/configs/:config_id/webhook',
      tag: TAG,
      summary: "Remove a git config's webhook",
      description: 'Deliveries are refused afterwards (404).',
      access: { permission: 'pull_requests:MERGE_DEPLOY' },
      params: configIdParams,
      responses: {
        200: { description: 'Removed', schema: z.object({ config_id: z.string(), deleted: z.literal(true) }) },
        404: { description: 'Unknown config or no webhook' },
      },
      handler: (_ctx, { params }) => hooks.remove(params.config_id),
    }),
    defineRoute({
      method: 'post',
      path: '/api/git/webhooks/:config_id',
      tag: TAG,
      summary: "The provider's webhook delivery",
      description:
        "The provider's signed webhook delivery; a merged pull request Switchyard opened starts a `git_deploy` of its merge commit into its target. Details: docs/git.md#post-apigitwebhooksconfig_id.",
      access: 'public',
      params: webhookParams,
      body: z.unknown(),
      responses: {
        200: { description: 'Nothing to do (`ignored`, with the reason)', schema: webhookAnswer },
        202: { description: 'The deploy was started', schema: webhookAnswer },
        400: { description: 'No delivery id' },
        401: { description: '`invalid_signature`: not signed with the secret; nothing was done or stored' },
        403: { description: "The webhook's owner may not deploy now; nothing was started" },
        404: { description: 'Unknown config, or no webhook set' },
        409: { description: '`replayed_delivery`: this delivery id was taken before; nothing was done' },
        503: upstream,
      },
      async handler(ctx, { params, body }) {
        const r = await hooks.deliver(params.config_id, ctx.headers, rawBody(ctx), body, linkBase(ctx));
        ctx.status = r.outcome === 'deploying' ? 202 : 200;
        ctx.body = r;
      },
    }),
  ];
}
