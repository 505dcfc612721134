import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute, type ResponseSpec } from '../http/routes.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { taskAccepted } from '../tasks/schemas.ts';
import { GitBranches } from './branches.ts';
import { gitDeployInput } from './input.ts';
import { PullRequests } from './pull-requests.ts';
import { gitReviewRoutes, linkBase } from './review-routes.ts';
import {
  abortView,
  batchBody,
  batchView,
  commitBody,
  commitView,
  configIdParams,
  connectionTest,
  continueBody,
  continueView,
  dashboardParams,
  deployBody,
  diffQuery,
  diffView,
  envBody,
  envQuery,
  gitConfigCreate,
  gitConfigList,
  gitConfigUpdate,
  gitConfigView,
  historyQuery,
  historyView,
  initBody,
  initView,
  MAX_REPOSITORY_STATUS_BATCH,
  mergeStatusView,
  pullView,
  pushView,
  remoteRepository,
  remoteRepositoryCreate,
  remoteRepositoryList,
  resolveBody,
  resolveView,
  statusView,
  syncBody,
  syncView,
} from './schemas.ts';

const TAG = 'Git';
const READ = { permission: 'git:READ' } as const;
const WRITE = { permission: 'git:WRITE' } as const;

const r404env: Record<number, ResponseSpec> = { 404: { description: 'Unknown environment, or no such dashboard in it' } };
const noRepo: ResponseSpec = { description: 'Unknown environment or dashboard; or `no_repository`: the dashboard has no repository yet' };
const upstream: ResponseSpec = {
  description:
    "The environment's Superset, or the git server, is unavailable (`host_not_allowed`: `ALLOWED_UPSTREAM_HOSTS` does not allow it; nothing was sent)",
};
const identity: ResponseSpec = {
  description: 'Invalid request; or `git_identity_required`: set `git_username` and `git_email` in your profile preferences first',
};

export function gitRoutes(app: AppContext): AnyRoute[] {
  const git = app.git;
  const dash = (p: string) => `/api/git/dashboards/:dashboard_id/${p}`;
  const branches = new GitBranches(git, app.stores.gitReviews, app.logger);
  const prs = new PullRequests(app);

  return [
    ...gitReviewRoutes(app),
    // --- configs -------------------------------------------------------------------------------
    defineRoute({
      method: 'get',
      path: '/api/git/configs',
      tag: TAG,
      summary: 'List git server configs',
      description: 'The token is never returned: `pat` is always the mask `********`.',
      access: READ,
      responses: { 200: { description: 'Every config, by name', schema: gitConfigList } },
      handler: () => git.listConfigs(),
    }),
    defineRoute({
      method: 'post',
      path: '/api/git/configs',
      tag: TAG,
      summary: 'Create a git server config',
      description:
        'A git server config: provider `gitea`, `github` or `gitlab` and the owner the repositories live under; the personal access token is stored encrypted and never returned. Details: docs/git.md#post-apigitconfigs.',
      access: WRITE,
      body: gitConfigCreate,
      responses: {
        201: { description: 'Created', schema: gitConfigView },
        400: { description: 'Invalid body (`validation_failed`), or a server outside `ALLOWED_UPSTREAM_HOSTS` (`host_not_allowed`)' },
        409: { description: 'A config with this name exists' },
      },
      async handler(ctx, { body }) {
        const view = await git.createConfig(body);
        ctx.status = 201;
        ctx.set('Location', `/api/git/configs/${view.id}`);
        ctx.body = view;
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/git/configs/:config_id',
      tag: TAG,
      summary: 'Change a git server config',
      description:
        'Fields left out keep their value; a `pat` left out (or sent as the mask) keeps the stored token. Moving the config to another server or provider without sending the token again is refused (`400 secret_required`), so a stored token is never sent somewhere new.',
      access: WRITE,
      params: configIdParams,
      body: gitConfigUpdate,
      responses: {
        200: { description: 'The changed config', schema: gitConfigView },
        400: {
          description:
            'Invalid request; `secret_required`: base_url or provider changed without the token; or `host_not_allowed`: a server outside `ALLOWED_UPSTREAM_HOSTS`',
        },
        404: { description: 'Unknown config' },
        409: { description: 'Another config has this name' },
      },
      handler: (_ctx, { params, body }) => git.updateConfig(params.config_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/git/configs/:config_id',
      tag: TAG,
      summary: 'Delete a git server config',
      description: 'Repositories that used it keep their local history; push and pull need a config again.',
      access: WRITE,
      params: configIdParams,
      responses: {
        200: { description: 'Deleted', schema: z.object({ config_id: z.string(), deleted: z.literal(true) }) },
        404: { description: 'Unknown config' },
      },
      async handler(_ctx, { params }) {
        await git.deleteConfig(params.config_id);
        return { config_id: params.config_id, deleted: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/git/configs/:config_id/test',
      tag: TAG,
      summary: 'Test a git server config',
      description:
        "Asks the provider whom the token belongs to. 400 with the provider's reason when it refuses or cannot be reached: its HTTP status and one short line (no markup, nothing like a token), never its body.",
      access: WRITE,
      params: configIdParams,
      responses: {
        200: { description: 'The account the token belongs to', schema: connectionTest },
        400: { description: "`git_provider_error`: the provider's reason (`reason`, `upstream_status`)" },
        404: { description: 'Unknown config' },
      },
      handler: (_ctx, { params }) => git.testConfig(params.config_id),
    }),
    defineRoute({
      method: 'get',
      path: '/api/git/configs/:config_id/repositories',
      tag: TAG,
      summary: "List the owner's repositories (gitea)",
      description:
        'Only for `gitea` configs (400 `unsupported_provider` for others). Normalised: `name`, `full_name`, `clone_url`, `private`, `default_branch`.',
      access: READ,
      params: configIdParams,
      responses: {
        200: { description: 'The repositories', schema: remoteRepositoryList },
        400: { description: "`unsupported_provider`, or `git_provider_error` with the provider's reason" },
        404: { description: 'Unknown config' },
      },
      handler: (_ctx, { params }) => git.listRemoteRepositories(params.config_id),
    }),
    defineRoute({
      method: 'post',
      path: '/api/git/configs/:config_id/repositories',
      tag: TAG,
      summary: 'Create a repository on the server',
      access: WRITE,
      params: configIdParams,
      body: remoteRepositoryCreate,
      responses: {
        201: { description: 'Created (normalised)', schema: remoteRepository },
        400: { description: "Invalid request, or `git_provider_error` with the provider's reason (a taken name, a refused token)" },
        404: { description: 'Unknown config' },
      },
      async handler(ctx, { params, body }) {
        ctx.status = 201;
        ctx.body = await git.createRemoteRepository(params.config_id, body);
      },
    }),

    // --- dashboard repositories ----------------------------------------------------------------
    defineRoute({
      method: 'post',
      path: '/api/git/status/batch',
      tag: TAG,
      summary: 'Repository status of many dashboards',
      description: `Ids are deduplicated and cut at ${MAX_REPOSITORY_STATUS_BATCH} (\`truncated\`); one status per dashboard, keyed by id. A failure of one dashboard marks it \`ERROR\` with the reason; the others are still answered.`,
      access: READ,
      body: batchBody,
      responses: { 200: { description: 'One status per dashboard', schema: batchView }, 404: { description: 'Unknown environment' } },
      handler: (_ctx, { body }) => git.batchStatus(body.env_id, body.dashboard_ids),
    }),
    defineRoute({
      method: 'post',
      path: dash('init'),
      tag: TAG,
      summary: "Create the dashboard's repository",
      description:
        "Creates the repository of the dashboard's UUID, one history for every environment, optionally with a remote on the config's server; repeating it is harmless. Details: docs/git.md#post-apigitdashboardsdashboard_idinit.",
      access: WRITE,
      params: dashboardParams,
      body: initBody,
      responses: {
        200: { description: 'The repository', schema: initView },
        400: { description: "Invalid request, or `git_provider_error` with the provider's reason" },
        404: { description: 'Unknown environment, dashboard or git config' },
        409: {
          description:
            "`unsafe_path`: the remote's tree holds a link, a submodule or a name leaving the working copy (`path`, `reason`, `next_actions`); `remote_host_mismatch`: the remote is not on the config's server",
        },
        503: upstream,
      },
      handler: (_ctx, { params, body, principal }) => git.init(principal, body.env_id, params.dashboard_id, body),
    }),
    defineRoute({
      method: 'get',
      path: dash('status'),
      tag: TAG,
      summary: "The dashboard repository's status",
      description:
        '`NO_REPO` (not an error) when the dashboard has no repository. Otherwise staged, modified and untracked files, ahead/behind the remote (as of the last fetch), a merge in progress, and the last deploy of a pinned commit.',
      access: READ,
      params: dashboardParams,
      query: envQuery,
      responses: { 200: { description: 'The status', schema: statusView }, ...r404env, 503: upstream },
      handler: (_ctx, { params, query }) => git.status(query.env_id, params.dashboard_id),
    }),
    defineRoute({
      method: 'post',
      path: dash('sync'),
      tag: TAG,
      summary: 'Write the dashboard from Superset into its working copy',
      description:
        'Exports the dashboard from `env_id` and writes it into the working copy as normalised YAML; nothing is committed. Details: docs/git.md#post-apigitdashboardsdashboard_idsync.',
      access: WRITE,
      params: dashboardParams,
      body: syncBody,
      responses: {
        200: { description: 'What changed', schema: syncView },
        404: noRepo,
        409: { description: '`dashboard_mismatch` (the id now names another dashboard), `merge_in_progress` or `unsafe_path`' },
        422: { description: "`export_refused`: Superset's export unpacks past the bundle budget or past the sizes it declares" },
        503: upstream,
      },
      async handler(_ctx, { params, body }) {
        await branches.onto(body.env_id, params.dashboard_id, body.branch);
        return git.sync(body.env_id, params.dashboard_id);
      },
    }),
    defineRoute({
      method: 'get',
      path: dash('diff'),
      tag: TAG,
      summary: 'Unified diff',
      description: 'The working tree against HEAD, or `from`..`to` (commits, branches, `HEAD~N`). One unified patch per file.',
      access: READ,
      params: dashboardParams,
      query: diffQuery,
      responses: {
        200: { description: 'Per-file patches', schema: diffView },
        400: { description: 'Invalid request or reference' },
        404: { description: 'Unknown environment, dashboard, repository (`no_repository`) or reference (`unknown_ref`)' },
        409: { description: '`unsafe_path`: a commit compared holds a name leaving the working copy' },
        503: upstream,
      },
      handler: (_ctx, { params, query }) => git.diff(query.env_id, params.dashboard_id, query),
    }),
    defineRoute({
      method: 'get',
      path: dash('history'),
      tag: TAG,
      summary: 'Commit history',
      description: 'Newest first: commit, message, author, time and changed files.',
      access: READ,
      params: dashboardParams,
      query: historyQuery,
      responses: {
        200: { description: 'Commits', schema: historyView },
        404: noRepo,
        500: { description: 'Unexpected failure reading the history (the problem names the route)' },
        503: upstream,
      },
      handler: (ctx, { params, query }) => withRouteContext(ctx.path, () => git.history(query.env_id, params.dashboard_id, query.limit)),
    }),
    defineRoute({
      method: 'post',
      path: dash('commit'),
      tag: TAG,
      summary: 'Commit the working tree',
      description:
        'Sets the repository identity from your preferences (`git_username`, `git_email`) first. With nothing to commit it answers `committed: false` and the current HEAD, so a retry never makes an empty commit.',
      access: WRITE,
      params: dashboardParams,
      body: commitBody,
      responses: {
        200: { description: 'The commit', schema: commitView },
        400: identity,
        404: noRepo,
        409: { description: '`merge_in_progress`' },
        500: { description: 'Unexpected failure (the problem names the route)' },
        503: upstream,
      },
      handler: (ctx, { params, body, principal }) =>
        withRouteContext(ctx.path, async () => {
          await branches.onto(body.env_id, params.dashboard_id, body.branch);
          return git.commit(principal, body.env_id, params.dashboard_id, body.message, body.paths);
        }),
    }),
    defineRoute({
      method: 'post',
      path: dash('push'),
      tag: TAG,
      summary: 'Push to the remote',
      description: 'The token is handed to git per request (never in a URL, `.git/config` or a log).',
      access: WRITE,
      params: dashboardParams,
      body: envBody,
      responses: {
        200: { description: 'Pushed', schema: pushView },
        400: { description: '`git_auth_failed` or `remote_not_found`' },
        404: noRepo,
        409: {
          description:
            "`push_rejected` (pull first), `no_remote`, `merge_in_progress`, `remote_host_mismatch` (the remote is not on its config's server: the token is not sent)",
        },
        503: upstream,
      },
      async handler(ctx, { params, body, principal }) {
        const pushed = await git.push(body.env_id, params.dashboard_id);
        // The branch moved: its open pull request is previewed again.
        const preview = await prs.afterPush(principal, linkBase(ctx), body.env_id, params.dashboard_id);
        return { ...pushed, ...(preview ? { preview } : {}) };
      },
    }),
    defineRoute({
      method: 'post',
      path: dash('pull'),
      tag: TAG,
      summary: 'Pull from the remote',
      description:
        'Fetches and merges from the remote with the identity from your preferences; a conflict leaves the merge in progress (`status: conflict`) rather than failing. Details: docs/git.md#post-apigitdashboardsdashboard_idpull.',
      access: WRITE,
      params: dashboardParams,
      body: envBody,
      responses: {
        200: { description: 'The outcome', schema: pullView },
        400: { description: 'Invalid request; `git_identity_required`; `git_auth_failed` or `remote_not_found` from the git server' },
        404: noRepo,
        409: {
          description:
            "`dirty_working_copy` (commit first), `merge_in_progress`, `no_remote`, `unsafe_path` (`path`, `reason`, `next_actions`), `remote_host_mismatch` (the remote is not on its config's server: the token is not sent)",
        },
        503: upstream,
      },
      handler: (_ctx, { params, body, principal }) => git.pull(principal, body.env_id, params.dashboard_id),
    }),
    defineRoute({
      method: 'get',
      path: dash('merge/status'),
      tag: TAG,
      summary: 'The merge in progress',
      description: '`has_unfinished_merge`, and each conflicted file with both sides, the merge base and the working file.',
      access: READ,
      params: dashboardParams,
      query: envQuery,
      responses: {
        200: { description: 'Merge state', schema: mergeStatusView },
        404: noRepo,
        409: { description: '`unsafe_path`: a conflicted file of the working copy is a symbolic link (never read through)' },
        503: upstream,
      },
      handler: (_ctx, { params, query }) => git.mergeStatus(query.env_id, params.dashboard_id),
    }),
    defineRoute({
      method: 'post',
      path: dash('merge/resolve'),
      tag: TAG,
      summary: 'Resolve conflicted files',
      description:
        'Per file: `ours`, `theirs`, or `content` (the whole resolved file). A resolution that keeps conflict markers or is not valid YAML refuses the request; nothing is written then.',
      access: WRITE,
      params: dashboardParams,
      body: resolveBody,
      responses: {
        200: { description: 'Resolved files', schema: resolveView },
        404: noRepo,
        409: { description: '`no_merge_in_progress`, or `unsafe_path` (a file to write is a symbolic link or under one)' },
        503: upstream,
      },
      handler: (_ctx, { params, body }) => git.mergeResolve(body.env_id, params.dashboard_id, body.resolutions),
    }),
    defineRoute({
      method: 'post',
      path: dash('merge/abort'),
      tag: TAG,
      summary: 'Abort the merge',
      description: 'Restores the state before the pull.',
      access: WRITE,
      params: dashboardParams,
      body: envBody,
      responses: {
        200: { description: 'Aborted', schema: abortView },
        404: noRepo,
        409: { description: '`no_merge_in_progress`' },
        503: upstream,
      },
      handler: (_ctx, { params, body }) => git.mergeAbort(body.env_id, params.dashboard_id),
    }),
    defineRoute({
      method: 'post',
      path: dash('merge/continue'),
      tag: TAG,
      summary: 'Commit the resolved merge',
      access: WRITE,
      params: dashboardParams,
      body: continueBody,
      responses: {
        200: { description: 'Committed', schema: continueView },
        400: identity,
        404: noRepo,
        409: { description: '`unresolved_conflicts` (lists them) or `no_merge_in_progress`' },
        503: upstream,
      },
      handler: (_ctx, { params, body, principal }) => git.mergeContinue(principal, body.env_id, params.dashboard_id, body.message),
    }),
    defineRoute({
      method: 'post',
      path: dash('deploy'),
      tag: TAG,
      summary: 'Deploy a pinned commit into an environment',
      description:
        'Starts a `git_deploy` task that imports the dashboard as it is at `commit` into `target_env_id` through the migration path and records which commit went live where. Details: docs/git.md#post-apigitdashboardsdashboard_iddeploy.',
      access: taskAccess('git_deploy'),
      params: dashboardParams,
      body: deployBody,
      responses: {
        202: { description: 'Task accepted', schema: taskAccepted },
        400: { description: 'Invalid request or reference' },
        404: { description: 'Unknown environment, dashboard, repository or commit' },
        503: upstream,
      },
      async handler(ctx, { params, body, principal }) {
        const d = await git.prepareDeploy(body.env_id, params.dashboard_id, body.target_env_id ?? body.env_id, body.commit);
        await acceptTask(ctx, app, {
          kind: 'git_deploy',
          ...gitDeployInput(body, params.dashboard_id, d, principal.userId),
          owner: principal,
        });
      },
    }),
  ];
}

/** Unexpected failures of these routes become 500 with the route in the problem body; domain errors pass as they are. */
async function withRouteContext<T>(route: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(
      500,
      'git_operation_failed',
      'Git operation failed',
      `${route}: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
        extra: { route },
      },
    );
  }
}
