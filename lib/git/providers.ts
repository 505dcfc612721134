/**
 * Git hosting providers (GitHub, GitLab, Gitea) over their REST APIs: who the token belongs to,
 * the repositories of an owner, and creating a repository. Answers are normalised to one shape;
 * a refusal carries the provider's status and a short, sanitised reason (one line, no markup, no
 * token: upstream-reason.ts), never its body. The token is only ever sent in the Authorization
 * header of the provider's own origin, through the egress policy (ALLOWED_UPSTREAM_HOSTS).
 */
import { egressFetch } from '../egress/connect.ts';
import { egressRefusal, EgressPolicy } from '../egress/policy.ts';
import { AppError } from '../errors.ts';
import { upstreamReason } from '../upstream-reason.ts';

export type ProviderKind = 'github' | 'gitlab' | 'gitea';

export interface ProviderTarget {
  provider: ProviderKind;
  baseUrl: string;
  owner: string;
  token: string;
  timeoutMs?: number;
  /** Where the provider may be (ALLOWED_UPSTREAM_HOSTS); none: anywhere. */
  egress?: EgressPolicy;
}

export interface RemoteRepository {
  name: string;
  full_name: string;
  clone_url: string;
  private: boolean;
  default_branch: string;
}

export interface ProviderAccount {
  login: string;
  name: string | null;
  email: string | null;
}

/** The provider refused (bad token, no such owner, name taken) or could not be reached. */
export class GitProviderError extends AppError {
  override name = 'GitProviderError';
  readonly upstreamStatus?: number;
  constructor(provider: ProviderKind, what: string, reason: string, upstreamStatus?: number, cause?: unknown) {
    super(400, 'git_provider_error', 'Git provider refused', `${provider}: ${what} failed: ${reason}`, {
      cause,
      extra: { provider, reason, ...(upstreamStatus !== undefined ? { upstream_status: upstreamStatus } : {}) },
    });
    this.upstreamStatus = upstreamStatus;
  }
}

export interface GitProvider {
  whoami(): Promise<ProviderAccount>;
  listRepositories(): Promise<RemoteRepository[]>;
  createRepository(input: { name: string; private: boolean; description?: string; defaultBranch?: string }): Promise<RemoteRepository>;
}

/** Where the REST API of a provider lives, from the configured base URL. */
export function apiBase(provider: ProviderKind, baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  if (provider === 'github') {
    const host = new URL(base).hostname.toLowerCase();
    if (host === 'github.com' || host === 'www.github.com') return 'https://api.github.com';
    if (host === 'api.github.com') return base;
    return `${base}/api/v3`; // GitHub Enterprise Server
  }
  return provider === 'gitlab' ? `${base}/api/v4` : `${base}/api/v1`;
}

/** The provider's reason from its error body, sanitised; the fallback (`HTTP <status>`) when there is none to pass on. */
function reasonOf(body: unknown, fallback: string, token: string): string {
  let said: unknown = body;
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const m = b.message ?? b.error_description ?? b.error;
    said = m && typeof m === 'object' ? JSON.stringify(m) : m; // GitLab: { message: { name: ["has already been taken"] } }
  }
  const reason = upstreamReason(said, [token]);
  return reason ? `${fallback}: ${reason}` : fallback;
}

/** One provider's REST API with the token in its header (also used by ./reviews.ts). */
export class RestClient {
  private readonly t: ProviderTarget;
  readonly base: string;
  constructor(t: ProviderTarget) {
    this.t = t;
    this.base = apiBase(t.provider, t.baseUrl);
  }

  async call<T>(what: string, method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'switchyard' };
    if (this.t.provider === 'gitlab') headers['PRIVATE-TOKEN'] = this.t.token;
    else headers.Authorization = this.t.provider === 'github' ? `Bearer ${this.t.token}` : `token ${this.t.token}`;
    if (this.t.provider === 'github') headers['X-GitHub-Api-Version'] = '2022-11-28';
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await egressFetch(this.t.egress ?? EgressPolicy.OPEN)(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'error',
        signal: AbortSignal.timeout(this.t.timeoutMs ?? 15_000),
      });
    } catch (err) {
      const refused = egressRefusal(err);
      if (refused) throw refused;
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const why = upstreamReason(e.cause?.code ?? e.cause?.message ?? e.message, [this.t.token]) ?? 'no answer';
      throw new GitProviderError(this.t.provider, what, `cannot reach ${this.base}: ${why}`, undefined, err);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // expected: not JSON; reasonOf reads the text.
    }
    if (!res.ok) throw new GitProviderError(this.t.provider, what, reasonOf(parsed, `HTTP ${res.status}`, this.t.token), res.status);
    if (typeof parsed !== 'object' || parsed === null)
      throw new GitProviderError(this.t.provider, what, `answered HTTP ${res.status} with a body that is not JSON`, res.status);
    return parsed as T;
  }
}

export const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);

function giteaLike(kind: 'github' | 'gitea', t: ProviderTarget): GitProvider {
  const rest = new RestClient(t);
  const norm = (r: Record<string, unknown>): RemoteRepository => ({
    name: str(r.name),
    full_name: str(r.full_name),
    clone_url: str(r.clone_url),
    private: r.private === true,
    default_branch: str(r.default_branch, 'main'),
  });
  const whoami = async (): Promise<ProviderAccount> => {
    const u = await rest.call<Record<string, unknown>>("reading the token's account", 'GET', '/user');
    return { login: str(u.login), name: str(u.full_name ?? u.name) || null, email: str(u.email) || null };
  };
  const isSelf = async () => (await whoami()).login.toLowerCase() === t.owner.toLowerCase();
  const owner = encodeURIComponent(t.owner);
  return {
    whoami,
    async listRepositories() {
      const self = await isSelf();
      const all: RemoteRepository[] = [];
      for (let page = 1; page <= 100; page++) {
        const size = kind === 'gitea' ? 'limit=50' : 'per_page=100';
        const path = self ? `/user/repos?${size}&page=${page}` : `/orgs/${owner}/repos?${size}&page=${page}`;
        const batch = await rest.call<Array<Record<string, unknown>>>('listing repositories', 'GET', path);
        if (!Array.isArray(batch) || !batch.length) break;
        // /user/repos also lists repositories the user only collaborates on: keep the owner's.
        all.push(...batch.map(norm).filter((r) => r.full_name.toLowerCase().startsWith(`${t.owner.toLowerCase()}/`)));
        if (batch.length < (kind === 'gitea' ? 50 : 100)) break;
      }
      return all;
    },
    async createRepository(input) {
      const path = (await isSelf()) ? '/user/repos' : `/orgs/${owner}/repos`;
      const body: Record<string, unknown> = { name: input.name, private: input.private, description: input.description ?? '' };
      if (kind === 'gitea' && input.defaultBranch) body.default_branch = input.defaultBranch;
      return norm(await rest.call<Record<string, unknown>>('creating a repository', 'POST', path, body));
    },
  };
}

function gitlab(t: ProviderTarget): GitProvider {
  const rest = new RestClient(t);
  const norm = (p: Record<string, unknown>): RemoteRepository => ({
    name: str(p.path ?? p.name),
    full_name: str(p.path_with_namespace),
    clone_url: str(p.http_url_to_repo),
    private: p.visibility !== 'public' && p.visibility !== 'internal',
    default_branch: str(p.default_branch, 'main'),
  });
  const whoami = async (): Promise<ProviderAccount> => {
    const u = await rest.call<Record<string, unknown>>("reading the token's account", 'GET', '/user');
    return { login: str(u.username), name: str(u.name) || null, email: str(u.email ?? u.public_email) || null };
  };
  return {
    whoami,
    async listRepositories() {
      const all: RemoteRepository[] = [];
      for (let page = 1; page <= 100; page++) {
        const batch = await rest.call<Array<Record<string, unknown>>>(
          'listing repositories',
          'GET',
          `/projects?membership=true&simple=true&per_page=100&page=${page}`,
        );
        if (!Array.isArray(batch) || !batch.length) break;
        all.push(...batch.map(norm).filter((r) => r.full_name.toLowerCase().startsWith(`${t.owner.toLowerCase()}/`)));
        if (batch.length < 100) break;
      }
      return all;
    },
    async createRepository(input) {
      const me = await whoami();
      const body: Record<string, unknown> = {
        name: input.name,
        path: input.name,
        visibility: input.private ? 'private' : 'public',
        description: input.description ?? '',
      };
      if (input.defaultBranch) body.default_branch = input.defaultBranch;
      if (me.login.toLowerCase() !== t.owner.toLowerCase()) {
        const ns = await rest.call<Record<string, unknown>>('finding the group', 'GET', `/namespaces/${encodeURIComponent(t.owner)}`);
        body.namespace_id = ns.id;
      }
      return norm(await rest.call<Record<string, unknown>>('creating a repository', 'POST', '/projects', body));
    },
  };
}

export function gitProvider(t: ProviderTarget): GitProvider {
  return t.provider === 'gitlab' ? gitlab(t) : giteaLike(t.provider, t);
}

/** The user name isomorphic-git sends with the token (the token is the password). */
export function authUsername(provider: ProviderKind): string {
  return provider === 'gitlab' ? 'oauth2' : provider === 'github' ? 'x-access-token' : 'switchyard';
}
