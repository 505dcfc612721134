/**
 * Pull requests (merge requests on GitLab) over the providers' REST APIs: open, update, read,
 * a commit status on the head commit, and a comment. Answers are normalised to one shape; a
 * refusal is a GitProviderError carrying the provider's status and sanitised reason.
 *
 * Gitea: /repos/{owner}/{repo}/pulls, /statuses/{sha}, /issues/{index}/comments, /branches/{name}.
 * GitHub: the same paths (its REST API v3). GitLab: /projects/{path}/merge_requests, /statuses/{sha},
 * /merge_requests/{iid}/notes, /repository/branches/{name}.
 */
import { GitProviderError, RestClient, str, type ProviderTarget } from './providers.ts';

export type StatusState = 'pending' | 'success' | 'failure';

export interface PullRequestView {
  number: number;
  url: string;
  state: 'open' | 'closed' | 'merged';
  head_branch: string;
  base_branch: string;
  head_sha: string | null;
  merge_commit_sha: string | null;
  title: string;
  body: string;
}

export interface CommitStatus {
  context: string;
  state: StatusState;
  description: string;
  target_url: string | null;
}

export interface ReviewProvider {
  open(input: { head: string; base: string; title: string; body: string }): Promise<PullRequestView>;
  update(number: number, input: { title?: string; body?: string }): Promise<PullRequestView>;
  get(number: number): Promise<PullRequestView>;
  setStatus(sha: string, status: CommitStatus): Promise<void>;
  comment(number: number, body: string): Promise<void>;
  /** The commit the server's API holds for a branch; null while it answers none (see ./branch-on-server.ts). */
  branchHead(name: string): Promise<string | null>;
}

/** The repository a review lives in: the config's owner and the repository's name on the server. */
export interface ReviewTarget extends ProviderTarget {
  repo: string;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

/**
 * A branch read, null while the server does not answer it: 404 (no such branch yet), and a 5xx
 * (Gitea fails the read of a branch of a repository it still counts as empty, which it does until
 * its queue has taken the first push). A refused credential or any other answer is final.
 */
async function headOrNull(read: () => Promise<Record<string, unknown>>, commitOf: (b: Record<string, unknown>) => unknown) {
  try {
    return str(commitOf(await read())) || null;
  } catch (err) {
    const status = err instanceof GitProviderError ? err.upstreamStatus : undefined;
    if (status === 404 || (status !== undefined && status >= 500)) return null; // expected: not taken yet, asked again
    throw err;
  }
}

function giteaLike(t: ReviewTarget): ReviewProvider {
  const rest = new RestClient(t);
  const repo = `/repos/${encodeURIComponent(t.owner)}/${encodeURIComponent(t.repo)}`;
  const norm = (p: Record<string, unknown>): PullRequestView => {
    const head = (p.head ?? {}) as Record<string, unknown>;
    const base = (p.base ?? {}) as Record<string, unknown>;
    return {
      number: num(p.number),
      url: str(p.html_url),
      state: p.merged === true ? 'merged' : p.state === 'closed' ? 'closed' : 'open',
      head_branch: str(head.ref),
      base_branch: str(base.ref),
      head_sha: str(head.sha) || null,
      merge_commit_sha: str(p.merge_commit_sha) || null,
      title: str(p.title),
      body: str(p.body),
    };
  };
  // Gitea's and GitHub's state names: GitHub has no "warning"; both take failure.
  return {
    open: async (i) => norm(await rest.call('opening a pull request', 'POST', `${repo}/pulls`, i)),
    update: async (n, i) => norm(await rest.call('updating a pull request', 'PATCH', `${repo}/pulls/${n}`, i)),
    get: async (n) => norm(await rest.call('reading a pull request', 'GET', `${repo}/pulls/${n}`)),
    async setStatus(sha, s) {
      const body = {
        state: s.state,
        context: s.context,
        description: s.description,
        ...(s.target_url ? { target_url: s.target_url } : {}),
      };
      await rest.call('posting a commit status', 'POST', `${repo}/statuses/${encodeURIComponent(sha)}`, body);
    },
    async comment(n, body) {
      await rest.call('commenting on a pull request', 'POST', `${repo}/issues/${n}/comments`, { body });
    },
    // Gitea answers commit.id, GitHub commit.sha.
    branchHead: (name) =>
      headOrNull(
        () => rest.call('reading a branch', 'GET', `${repo}/branches/${encodeURIComponent(name)}`),
        (b) => {
          const c = (b.commit ?? {}) as Record<string, unknown>;
          return c.id ?? c.sha;
        },
      ),
  };
}

function gitlab(t: ReviewTarget): ReviewProvider {
  const rest = new RestClient(t);
  const project = `/projects/${encodeURIComponent(`${t.owner}/${t.repo}`)}`;
  const norm = (m: Record<string, unknown>): PullRequestView => ({
    number: num(m.iid),
    url: str(m.web_url),
    state: m.state === 'merged' ? 'merged' : m.state === 'closed' ? 'closed' : 'open',
    head_branch: str(m.source_branch),
    base_branch: str(m.target_branch),
    head_sha: str(m.sha) || null,
    merge_commit_sha: str(m.merge_commit_sha) || null,
    title: str(m.title),
    body: str(m.description),
  });
  // GitLab's names for the states: failed, not failure.
  const state = { pending: 'pending', success: 'success', failure: 'failed' } as const;
  return {
    open: async (i) =>
      norm(
        await rest.call('opening a merge request', 'POST', `${project}/merge_requests`, {
          source_branch: i.head,
          target_branch: i.base,
          title: i.title,
          description: i.body,
        }),
      ),
    update: async (n, i) =>
      norm(
        await rest.call('updating a merge request', 'PUT', `${project}/merge_requests/${n}`, {
          ...(i.title !== undefined ? { title: i.title } : {}),
          ...(i.body !== undefined ? { description: i.body } : {}),
        }),
      ),
    get: async (n) => norm(await rest.call('reading a merge request', 'GET', `${project}/merge_requests/${n}`)),
    async setStatus(sha, s) {
      const body = {
        state: state[s.state],
        name: s.context,
        description: s.description,
        ...(s.target_url ? { target_url: s.target_url } : {}),
      };
      await rest.call('posting a commit status', 'POST', `${project}/statuses/${encodeURIComponent(sha)}`, body);
    },
    async comment(n, body) {
      await rest.call('commenting on a merge request', 'POST', `${project}/merge_requests/${n}/notes`, { body });
    },
    branchHead: (name) =>
      headOrNull(
        () => rest.call('reading a branch', 'GET', `${project}/repository/branches/${encodeURIComponent(name)}`),
        (b) => ((b.commit ?? {}) as Record<string, unknown>).id,
      ),
  };
}

export function reviewProvider(t: ReviewTarget): ReviewProvider {
  return t.provider === 'gitlab' ? gitlab(t) : giteaLike(t);
}
