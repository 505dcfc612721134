import path from 'node:path';
import type { GitConfigStore, GitConfigInput, GitConfigRow } from '../../db/git/configs.ts';
import type { GitRepositoryRow, GitRepositoryStore } from '../../db/git/repositories.ts';
import type { ProfileStore } from '../../db/profile/store.ts';
import type { Config } from '../../lib/config.ts';
import { egressPolicy } from '../../lib/egress/policy.ts';
import { AppError, ConflictError, NotFoundError, UpstreamUnavailableError, ValidationError } from '../../lib/errors.ts';
import { filesFromExport, UUID } from '../../lib/git/dashboard-files.ts';
import { apiBase, authUsername, gitProvider, type RemoteRepository } from '../../lib/git/providers.ts';
import { NoRepositoryError, WorkingCopy, type Author, type Credentials, type Resolution } from '../../lib/git/working-copy.ts';
import type { Logger } from '../../lib/logger.ts';
import { assertSecretResent } from '../../lib/secret-destination.ts';
import type { Principal } from '../auth/principal.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import type { Supersets } from '../environments/upstream.ts';
import { assertConfigDestination, assertRemoteDestination } from './destinations.ts';
import { captureInput, type CompanionCapturer } from './companion-capture.ts';
import { exportProblem } from './export-problem.ts';
import { deploymentView, errorOf, statusName, type RepositoryStatus } from './repository-status.ts';
import { MAX_REPOSITORY_STATUS_BATCH, PAT_MASK, toConfigView } from './schemas.ts';

const SYSTEM_AUTHOR: Author = { name: 'Switchyard', email: 'switchyard@localhost' };

/** Runs `fn` over `items` with at most `limit` at once, keeping the order of results. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Git per dashboard: server configs and the dashboard repositories. Every operation on a working
 * copy holds the repository's database lock, so the API and any worker never touch one working
 * copy at once.
 */
export class GitService {
  readonly configs: GitConfigStore;
  readonly repos: GitRepositoryStore;
  private readonly profiles: ProfileStore;
  private readonly config: Config;
  private readonly environments: EnvironmentStore;
  private readonly supersets: Supersets;
  private readonly logger: Logger;
  private readonly companions?: CompanionCapturer;

  constructor(deps: {
    configs: GitConfigStore;
    repos: GitRepositoryStore;
    profiles: ProfileStore;
    config: Config;
    environments: EnvironmentStore;
    supersets: Supersets;
    logger: Logger;
    /** Reads the dashboard's companions as files (./companion-capture.ts); without it a sync keeps the ones the repository has. */
    companions?: CompanionCapturer;
  }) {
    this.companions = deps.companions;
    this.configs = deps.configs;
    this.repos = deps.repos;
    this.profiles = deps.profiles;
    this.config = deps.config;
    this.environments = deps.environments;
    this.supersets = deps.supersets;
    this.logger = deps.logger.child({ component: 'git' });
  }

  // --- configs ---------------------------------------------------------------------------------

  async listConfigs() {
    const rows = await this.configs.list();
    return { items: rows.map(toConfigView), total: rows.length };
  }

  async createConfig(input: GitConfigInput) {
    await assertConfigDestination(egressPolicy(this.config), input.provider, input.base_url);
    const row = await this.configs.create(input);
    this.logger.info({ config_id: row.id, provider: row.provider, base_url: row.base_url }, 'git config created');
    return toConfigView(row);
  }

  async updateConfig(id: string, patch: Partial<GitConfigInput>) {
    const before = await this.configs.get(id);
    const sent = patch.pat !== undefined && patch.pat !== PAT_MASK;
    // The token goes only where it was sent with: another server (or another provider's API on it) needs it again.
    assertSecretResent({
      before: { url: apiBase(before.provider, before.base_url) },
      after: { url: apiBase(patch.provider ?? before.provider, patch.base_url ?? before.base_url) },
      secretSent: sent,
      secretField: 'body.pat',
      urlField: patch.base_url !== undefined ? 'body.base_url' : 'body.provider',
    });
    await assertConfigDestination(egressPolicy(this.config), patch.provider ?? before.provider, patch.base_url ?? before.base_url);
    const { pat, ...rest } = patch;
    const row = await this.configs.update(id, sent ? { ...rest, pat } : rest);
    this.logger.info({ config_id: id, changed: Object.keys(patch).filter((k) => k !== 'pat' || sent) }, 'git config updated');
    return toConfigView(row);
  }

  async deleteConfig(id: string) {
    if (!(await this.configs.remove(id))) throw new NotFoundError('Git config', id);
    this.logger.info({ config_id: id }, 'git config deleted');
  }

  private provider(row: GitConfigRow) {
    const { provider, base_url: baseUrl, owner } = row;
    return gitProvider({ provider, baseUrl, owner, token: this.configs.token(row), egress: egressPolicy(this.config) });
  }

  async testConfig(id: string) {
    const row = await this.configs.get(id);
    const started = Date.now();
    const account = await this.provider(row).whoami();
    return { ok: true as const, provider: row.provider, account, latency_ms: Date.now() - started };
  }

  async listRemoteRepositories(id: string) {
    const row = await this.configs.get(id);
    if (row.provider !== 'gitea')
      throw new AppError(
        400,
        'unsupported_provider',
        'Unsupported provider',
        `Listing repositories is available for gitea configs only; this config is ${row.provider}`,
      );
    const items = await this.provider(row).listRepositories();
    return { items, total: items.length };
  }

  async createRemoteRepository(id: string, input: { name: string; private: boolean; description?: string }): Promise<RemoteRepository> {
    const row = await this.configs.get(id);
    const repo = await this.provider(row).createRepository({ ...input, defaultBranch: row.default_branch });
    this.logger.info({ config_id: id, repository: repo.full_name }, 'remote repository created');
    return repo;
  }

  // --- dashboard repositories ------------------------------------------------------------------

  workingCopy(uuid: string): WorkingCopy {
    const dir = path.join(this.config.GIT_REPOS_DIR ?? path.join(this.config.SWITCHYARD_DATA_DIR, 'git'), uuid);
    return new WorkingCopy(dir, { egress: egressPolicy(this.config) });
  }

  /** The dashboard's UUID: from its binding, else from Superset (404 for an unknown environment or dashboard). */
  async dashboardUuid(envId: string, dashboardId: number): Promise<string> {
    const bound = (await this.repos.boundUuids(envId, [dashboardId])).get(dashboardId);
    if (bound) return bound;
    const d = await this.supersets.use(envId, (c) => c.dashboards.get(dashboardId), {
      notFound: (env) => `Dashboard ${dashboardId} in environment '${env.name}'`,
    });
    const uuid = (d as { uuid?: unknown }).uuid;
    // The UUID names the working copy's folder: anything else is refused.
    if (typeof uuid !== 'string' || !UUID.test(uuid.toLowerCase()))
      throw new UpstreamUnavailableError('Superset', `Superset gave dashboard ${dashboardId} no valid uuid`);
    if (await this.repos.get(uuid.toLowerCase())) await this.repos.bind(envId, dashboardId, uuid.toLowerCase());
    return uuid.toLowerCase();
  }

  /** Repository row and working copy of a dashboard; 404 `no_repository` when it has none. */
  async repository(envId: string, dashboardId: number) {
    const uuid = await this.dashboardUuid(envId, dashboardId);
    const row = await this.repos.get(uuid);
    const wc = this.workingCopy(uuid);
    if (!row || !wc.exists()) throw new NoRepositoryError(`Dashboard ${dashboardId} has no git repository yet; init one first`);
    return { uuid, row, wc };
  }

  async identity(principal: Principal): Promise<Author> {
    const prefs = principal.userId ? await this.profiles.get(principal.userId) : undefined;
    if (!prefs?.git_username || !prefs.git_email)
      throw new AppError(
        400,
        'git_identity_required',
        'Git identity required',
        'Set git_username and git_email in your profile preferences first (PATCH /api/profile/preferences)',
        {
          extra: { missing: [!prefs?.git_username && 'git_username', !prefs?.git_email && 'git_email'].filter(Boolean) },
        },
      );
    return { name: prefs.git_username, email: prefs.git_email };
  }

  async credentials(configId: string | null): Promise<Credentials | null> {
    if (!configId) return null;
    const row = await this.configs.find(configId);
    if (!row)
      throw new ConflictError('The git config of this repository was deleted; init the repository again with a config', 'config_missing');
    return { username: authUsername(row.provider), token: this.configs.token(row), origin: new URL(row.base_url).origin };
  }

  async init(
    principal: Principal,
    envId: string,
    dashboardId: number,
    body: { config_id?: string; remote_name?: string; create_remote: boolean; private: boolean; branch?: string },
  ) {
    const uuid = await this.dashboardUuid(envId, dashboardId);
    const config = body.config_id ? await this.configs.get(body.config_id) : null;
    if (!config && (body.create_remote || body.remote_name))
      throw new ValidationError('config_id is required for a remote', [
        { field: 'body.config_id', message: 'required with create_remote or remote_name' },
      ]);
    const branch = body.branch ?? config?.default_branch ?? 'main';
    const existing = await this.repos.get(uuid);
    const name = body.remote_name ?? existing?.remote_name ?? `dashboard-${uuid}`;
    const { remoteUrl, remoteCreated } = await this.remoteOf(uuid, config, existing, { ...body, name, branch });
    const author = await this.identity(principal).catch(() => SYSTEM_AUTHOR); // expected: the first commit only adds a README; the system identity is fine for it
    const title = await this.dashboardTitle(envId, dashboardId);
    const wc = this.workingCopy(uuid);
    // A remote that was not created just now may hold this dashboard's history already: adopt it.
    const adopt = remoteUrl && !remoteCreated ? { creds: await this.credentials(config?.id ?? existing?.config_id ?? null) } : undefined;
    const r = await this.repos.withLock([uuid], 'exclusive', () =>
      wc.init({
        adopt,
        branch: existing?.branch ?? branch,
        remoteUrl,
        author,
        readme: `# ${title ?? `Dashboard ${uuid}`}\n\nSuperset dashboard \`${uuid}\`, kept by Switchyard: one YAML file per object, named by UUID.\n`,
      }),
    );
    await this.repos.upsert({
      dashboard_uuid: uuid,
      title,
      config_id: config?.id ?? existing?.config_id ?? null,
      remote_name: config ? name : (existing?.remote_name ?? null),
      remote_url: remoteUrl,
      branch: existing?.branch ?? branch,
    });
    await this.repos.bind(envId, dashboardId, uuid);
    this.logger.info(
      { dashboard_uuid: uuid, env_id: envId, dashboard_id: dashboardId, remote_url: remoteUrl, created: r.created },
      'dashboard repository initialised',
    );
    return {
      dashboard_id: dashboardId,
      env_id: envId,
      dashboard_uuid: uuid,
      created: r.created,
      adopted_remote_history: r.adopted,
      branch: existing?.branch ?? branch,
      head: r.head,
      config_id: config?.id ?? existing?.config_id ?? null,
      remote_url: remoteUrl,
      remote_created: remoteCreated,
    };
  }

  /**
   * The repository's remote: the one it has (unless another configuration is given), else one
   * created at the provider or named by the configuration. Never a URL with credentials in it.
   */
  private async remoteOf(
    uuid: string,
    config: GitConfigRow | null,
    existing: GitRepositoryRow | undefined,
    want: { create_remote: boolean; private: boolean; name: string; branch: string },
  ): Promise<{ remoteUrl: string | null; remoteCreated: boolean }> {
    let remoteUrl: string | null = config
      ? existing?.config_id === config.id
        ? existing.remote_url
        : null
      : (existing?.remote_url ?? null);
    let remoteCreated = false;
    if (config && !remoteUrl) {
      if (want.create_remote) {
        const created = await this.provider(config).createRepository({
          name: want.name,
          private: want.private,
          defaultBranch: want.branch,
          description: `Superset dashboard ${uuid}`,
        });
        remoteUrl = created.clone_url;
        remoteCreated = true;
      } else remoteUrl = `${config.base_url}/${config.owner}/${want.name}.git`;
    }
    if (remoteUrl && /\/\/[^/]*@/.test(remoteUrl))
      throw new UpstreamUnavailableError('git provider', 'the provider gave a clone URL with credentials');
    if (remoteUrl && config) await assertRemoteDestination(egressPolicy(this.config), remoteUrl, config);
    return { remoteUrl, remoteCreated };
  }

  private async dashboardTitle(envId: string, dashboardId: number): Promise<string | null> {
    return this.supersets.use(envId, async (c) => (await c.dashboards.get(dashboardId)).dashboard_title ?? null).catch(() => null);
  }

  async status(envId: string, dashboardId: number): Promise<RepositoryStatus> {
    const uuid = await this.dashboardUuid(envId, dashboardId);
    const [one] = await this.statusOf(envId, [{ dashboardId, uuid }], 'throw');
    return one;
  }

  /**
   * Statuses of dashboards whose UUIDs are known: one shared lock statement, a few scans at once.
   * A working copy that cannot be read fails the single status request (`throw`, a 500) but is only
   * its own item's `ERROR` in a batch (`mark`), however many of the batch's dashboards were readable.
   */
  private async statusOf(
    envId: string,
    items: Array<{ dashboardId: number; uuid: string }>,
    onFailure: 'throw' | 'mark',
  ): Promise<RepositoryStatus[]> {
    const uuids = items.map((i) => i.uuid);
    const [remoteOf, deployments] = await Promise.all([this.repos.remoteUrls(uuids), this.repos.lastDeployments(uuids)]);
    return this.repos.withLock(
      uuids.filter((u) => remoteOf.has(u)),
      'shared',
      () =>
        mapLimit(items, 4, async ({ dashboardId, uuid }): Promise<RepositoryStatus> => {
          const base = { dashboard_id: dashboardId, env_id: envId, dashboard_uuid: uuid };
          const wc = this.workingCopy(uuid);
          if (!remoteOf.has(uuid) || !wc.exists()) return { status: 'NO_REPO', ...base };
          try {
            const s = await wc.status();
            const d = deployments.get(uuid);
            return {
              status: statusName(s),
              ...base,
              branch: s.branch,
              head: s.head,
              remote_url: remoteOf.get(uuid) ?? null,
              ahead: s.ahead,
              behind: s.behind,
              staged: s.staged,
              modified: s.modified,
              untracked: s.untracked,
              conflicted: s.conflicted,
              has_unfinished_merge: s.merging,
              last_deployed: d ? deploymentView(d) : null,
            };
          } catch (err) {
            if (onFailure === 'throw') throw err;
            return { status: 'ERROR', ...base, error: errorOf(err) };
          }
        }),
    );
  }

  async batchStatus(envId: string, ids: number[]) {
    await this.environments.get(envId);
    const distinct = [...new Set(ids)];
    const wanted = distinct.slice(0, MAX_REPOSITORY_STATUS_BATCH);
    const bound = await this.repos.boundUuids(envId, wanted);
    const items: Record<string, RepositoryStatus> = {};
    // Dashboards never bound here: their UUID comes from Superset (a repository may exist from another environment).
    const unbound = wanted.filter((id) => !bound.has(id));
    await mapLimit(unbound, 4, async (id) => {
      try {
        bound.set(id, await this.dashboardUuid(envId, id));
      } catch (err) {
        items[String(id)] = { status: 'ERROR', dashboard_id: id, env_id: envId, dashboard_uuid: null, error: errorOf(err) };
      }
    });
    const known = wanted.filter((id) => bound.has(id)).map((id) => ({ dashboardId: id, uuid: bound.get(id)! }));
    const statuses = await this.statusOf(envId, known, 'mark');
    for (const s of statuses) items[String(s.dashboard_id)] = s;
    const ordered: Record<string, RepositoryStatus> = {};
    for (const id of wanted) ordered[String(id)] = items[String(id)]!;
    return { items: ordered, truncated: distinct.length > wanted.length, requested: distinct.length };
  }

  async sync(envId: string, dashboardId: number) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    const zip = await this.supersets.use(envId, (c) => c.dashboards.export([dashboardId]), {
      notFound: (env) => `Dashboard ${dashboardId} in environment '${env.name}'`,
    });
    let files;
    try {
      files = filesFromExport(new Uint8Array(zip));
    } catch (err) {
      throw exportProblem(dashboardId, err);
    }
    if (files.dashboardUuid !== uuid)
      throw new ConflictError(`Dashboard ${dashboardId} is now ${files.dashboardUuid}, not the repository's ${uuid}`, 'dashboard_mismatch');
    const companions = await this.readCompanions(envId, dashboardId, files);
    const all = new Map([...files.files, ...Object.entries(companions.files)]);
    const changed = await this.repos.withLock([uuid], 'exclusive', () =>
      wc.writeBundle(all, { keepCompanions: !companions.view.captured }),
    );
    await this.repos.markSynced(uuid, envId, files.title || null);
    this.logger.info({ dashboard_uuid: uuid, env_id: envId, changed: changed.length }, 'dashboard synced into its repository');
    return { dashboard_uuid: uuid, env_id: envId, changed, companions: companions.view, status: await this.status(envId, dashboardId) };
  }

  /** The dashboard's companion files, or why they could not be read this time (the repository's stay then). */
  private async readCompanions(envId: string, dashboardId: number, files: ReturnType<typeof filesFromExport>) {
    if (!this.companions) return { files: {}, view: { captured: false, error: 'companions are not read by this server' } };
    try {
      const c = await this.companions(captureInput(envId, dashboardId, files));
      return { files: c.files, view: { captured: true, kinds: c.kinds } };
    } catch (err) {
      const error = `the companions could not be read (the repository's companion files were left as they were): ${errorText(err)}`;
      this.logger.warn({ err, dashboard_uuid: files.dashboardUuid }, error);
      return { files: {}, view: { captured: false, error } };
    }
  }

  async diff(envId: string, dashboardId: number, q: { from?: string; to?: string }) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    return this.repos.withLock([uuid], 'shared', async () => {
      const files = await wc.diff({ from: q.from, to: q.to });
      return { from: q.from ? await wc.resolveCommit(q.from) : await wc.headOid(), to: q.to ? await wc.resolveCommit(q.to) : null, files };
    });
  }

  async history(envId: string, dashboardId: number, limit: number) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    return { items: await this.repos.withLock([uuid], 'shared', () => wc.history(limit)) };
  }

  async commit(principal: Principal, envId: string, dashboardId: number, message: string, paths?: string[]) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    const author = await this.identity(principal);
    return this.repos.withLock([uuid], 'exclusive', async () => {
      await wc.setIdentity(author);
      const r = await wc.commit(message, author, paths);
      this.logger.info(
        { dashboard_uuid: uuid, commit: r.commit, committed: r.committed, by: principal.username },
        'dashboard repository commit',
      );
      return r;
    });
  }

  async push(envId: string, dashboardId: number) {
    const { uuid, row, wc } = await this.repository(envId, dashboardId);
    const creds = await this.credentials(row.config_id);
    const r = await this.repos.withLock([uuid], 'exclusive', () => wc.push(creds));
    this.logger.info(
      { dashboard_uuid: uuid, commit: r.commit, remote_url: row.remote_url, remote_messages: r.remote_messages },
      'dashboard repository pushed',
    );
    return { ...r, remote_url: row.remote_url };
  }

  async pull(principal: Principal, envId: string, dashboardId: number) {
    const { uuid, row, wc } = await this.repository(envId, dashboardId);
    const author = await this.identity(principal);
    const creds = await this.credentials(row.config_id);
    return this.repos.withLock([uuid], 'exclusive', async () => {
      await wc.setIdentity(author);
      const r = await wc.pull(creds, author);
      this.logger.info({ dashboard_uuid: uuid, outcome: r.status, conflicts: r.conflicts.length }, 'dashboard repository pulled');
      return r;
    });
  }

  async mergeStatus(envId: string, dashboardId: number) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    return this.repos.withLock([uuid], 'shared', () => wc.mergeStatus());
  }

  async mergeResolve(envId: string, dashboardId: number, resolutions: Resolution[]) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    return this.repos.withLock([uuid], 'exclusive', () => wc.resolve(resolutions));
  }

  async mergeAbort(envId: string, dashboardId: number) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    return this.repos.withLock([uuid], 'exclusive', async () => {
      await wc.abortMerge();
      return { status: 'aborted' as const, head: await wc.headOid() };
    });
  }

  async mergeContinue(principal: Principal, envId: string, dashboardId: number, message?: string) {
    const { uuid, wc } = await this.repository(envId, dashboardId);
    const author = await this.identity(principal);
    return this.repos.withLock([uuid], 'exclusive', async () => {
      const commit = await wc.continueMerge(message, author);
      return { status: 'committed' as const, commit };
    });
  }

  /** What a deploy needs at request time: the repository, the commit id pinned now, the target's protection. */
  async prepareDeploy(envId: string, dashboardId: number, targetEnvId: string, commit: string) {
    const { uuid, row, wc } = await this.repository(envId, dashboardId);
    const target = await this.environments.get(targetEnvId);
    const oid = await this.repos.withLock([uuid], 'shared', () => wc.resolveCommit(commit));
    // The environment whose rules and mappings the deploy applies, frozen with the task (TASK_KINDS.git_deploy.frozenPair).
    return { uuid, commit: oid, syncedEnvId: row.synced_env_id, protected: target.protected === true, targetName: target.name };
  }
}

/** A failure's words, through a workflow's wrapping (the activity's own message is the cause's). */
function errorText(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause && typeof e.cause === 'object') e = e.cause as typeof e;
  return String(e?.message ?? err).slice(0, 500);
}
