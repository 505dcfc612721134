// A local GitHub or GitLab for the review loop's adapters: no real server of either can run here
// (docs: /work/shared/reference/git-servers.md), so this one answers the shapes of their public
// REST documentation (GitHub: /user, /user/repos, /repos/{o}/{r}/pulls, /statuses/{sha},
// /issues/{n}/comments, /branches/{b}, /hooks, X-Hub-Signature-256 deliveries; GitLab: /api/v4/user, /projects,
// /merge_requests, /statuses/{sha}, /notes, /hooks, X-Gitlab-Token deliveries) over the real
// Gitea behind it: repositories, pull requests, statuses, comments and merges are Gitea's, git
// over smart HTTP is proxied to Gitea, and a merge is delivered to the registered hooks the way
// the provider delivers it. What is faked is only the provider's dialect.
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GiteaInfo } from './gitea/instance.ts';

export type FacadeKind = 'github' | 'gitlab';

interface Hook {
  url: string;
  secret: string;
}

export interface ReviewFacade {
  kind: FacadeKind;
  baseUrl: string;
  /** The token the facade takes (it answers 401 to any other). */
  token: string;
  /** Deliveries the facade made: the status Switchyard answered each with. */
  deliveries: Array<{ id: string; status: number }>;
  stop(): Promise<void>;
}

type Json = Record<string, any>;

/** Gitea's REST API, as the facade's owner account. */
async function gitea(g: GiteaInfo, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${g.baseUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `token ${g.token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  // Gitea answers some failures with an HTML page (a 500 on a branch of a repository it counts empty).
  const json = r.headers.get('content-type')?.includes('json') ?? false;
  return { status: r.status, body: text && json ? JSON.parse(text) : text || null };
}

const readBody = (req: http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startReviewFacade(kind: FacadeKind, g: GiteaInfo): Promise<ReviewFacade> {
  const token = `${kind}-facade-${randomUUID()}`;
  const hooks = new Map<string, Hook[]>();
  const deliveries: ReviewFacade['deliveries'] = [];
  let baseUrl = '';
  const shapes = kind === 'github' ? githubShapes(() => baseUrl, g) : gitlabShapes(() => baseUrl, g);

  const deliver = async (repo: string, pr: Json) => {
    for (const hook of hooks.get(repo) ?? []) {
      const { headers, body } = shapes.mergeEvent(repo, pr, hook.secret);
      const r = await fetch(hook.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      deliveries.push({ id: headers[kind === 'github' ? 'x-github-delivery' : 'x-gitlab-event-uuid']!, status: r.status });
    }
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://facade');
      const raw = await readBody(req);
      if (/\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/.test(url.pathname)) return proxyGit(req, res, url, raw, token, g);
      const authorized = kind === 'github' ? req.headers.authorization === `Bearer ${token}` : req.headers['private-token'] === token;
      if (!authorized) return send(res, 401, { message: 'Bad credentials' });
      const body = raw.length ? (JSON.parse(raw.toString('utf8')) as Json) : {};
      const r = await shapes.route(req.method ?? 'GET', url.pathname, body, { hooks, deliver });
      send(res, r.status, r.body);
    })().catch((err: unknown) => send(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { kind, baseUrl, token, deliveries, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Git over smart HTTP, to the same repository on Gitea, once the facade's token was sent as the password. */
async function proxyGit(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  raw: Buffer,
  token: string,
  g: GiteaInfo,
): Promise<void> {
  const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const password = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':').slice(1).join(':') : null;
  if (password !== token) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="facade"' });
    return void res.end();
  }
  const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${g.username}:${g.token}`).toString('base64')}` };
  for (const h of ['content-type', 'accept', 'git-protocol']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
  const r = await fetch(`${g.baseUrl}${url.pathname}${url.search}`, { method: req.method, headers, body: raw.length ? raw : undefined });
  res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/octet-stream' });
  res.end(Buffer.from(await r.arrayBuffer()));
}

interface Shapes {
  route(
    method: string,
    path: string,
    body: Json,
    ctx: { hooks: Map<string, Hook[]>; deliver(repo: string, pr: Json): Promise<void> },
  ): Promise<{ status: number; body: unknown }>;
  mergeEvent(repo: string, pr: Json, secret: string): { headers: Record<string, string>; body: string };
}

/** Gitea's answer to a merge request: merged through Gitea, then read back for its merge commit. */
async function mergeOnGitea(g: GiteaInfo, repo: string, n: number): Promise<Json | null> {
  const m = await gitea(g, 'POST', `/repos/${repo}/pulls/${n}/merge`, { Do: 'merge' });
  if (m.status !== 200) return null;
  return (await gitea(g, 'GET', `/repos/${repo}/pulls/${n}`)).body as Json;
}

function githubShapes(base: () => string, g: GiteaInfo): Shapes {
  const repoView = (r: Json) => ({
    name: r.name,
    full_name: r.full_name,
    clone_url: `${base()}/${r.full_name}.git`,
    private: r.private,
    default_branch: r.default_branch,
  });
  const prView = (p: Json) => ({
    number: p.number,
    html_url: `${base()}/${p.base.repo.full_name}/pull/${p.number}`,
    state: p.state,
    merged: p.merged,
    merge_commit_sha: p.merge_commit_sha ?? null,
    title: p.title,
    body: p.body,
    head: { ref: p.head.ref, sha: p.head.sha },
    base: { ref: p.base.ref },
  });
  return {
    async route(method, path, body, ctx) {
      const p = path.replace(/^\/api\/v3/, '');
      let m: RegExpExecArray | null;
      if (method === 'GET' && p === '/user')
        return { status: 200, body: { login: g.username, name: 'Facade', email: 'facade@example.com' } };
      if (method === 'POST' && p === '/user/repos') {
        const r = await gitea(g, 'POST', '/user/repos', { name: body.name, private: body.private, description: body.description });
        return { status: r.status, body: r.status === 201 ? repoView(r.body) : r.body };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(p)) && method === 'POST') {
        const r = await gitea(g, 'POST', `/repos/${m[1]}/pulls`, { head: body.head, base: body.base, title: body.title, body: body.body });
        return { status: r.status, body: r.status === 201 ? prView(r.body) : r.body };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)$/.exec(p))) {
        const r = await gitea(
          g,
          method === 'PATCH' ? 'PATCH' : 'GET',
          `/repos/${m[1]}/pulls/${m[2]}`,
          method === 'PATCH' ? { title: body.title, body: body.body } : undefined,
        );
        return { status: r.status, body: r.status < 300 ? prView(r.body) : r.body };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)\/merge$/.exec(p)) && method === 'PUT') {
        const merged = await mergeOnGitea(g, m[1], Number(m[2]));
        if (!merged) return { status: 405, body: { message: 'Pull Request is not mergeable' } };
        await ctx.deliver(m[1], merged);
        return { status: 200, body: { sha: merged.merge_commit_sha, merged: true, message: 'Pull Request successfully merged' } };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/statuses\/([0-9a-f]{40})$/.exec(p)) && method === 'POST') {
        const r = await gitea(g, 'POST', `/repos/${m[1]}/statuses/${m[2]}`, body);
        return {
          status: r.status,
          body: { state: body.state, context: body.context, target_url: body.target_url, description: body.description },
        };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/commits\/([0-9a-f]{40})\/statuses$/.exec(p))) {
        const r = await gitea(g, 'GET', `/repos/${m[1]}/commits/${m[2]}/statuses`);
        return {
          status: r.status,
          body: (r.body as Json[]).map((s) => ({
            state: s.status,
            context: s.context,
            target_url: s.target_url,
            description: s.description,
          })),
        };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(p))) {
        const r = await gitea(g, method, `/repos/${m[1]}/issues/${m[2]}/comments`, method === 'POST' ? { body: body.body } : undefined);
        return {
          status: r.status,
          body: method === 'POST' ? { id: r.body.id, body: r.body.body } : (r.body as Json[]).map((c) => ({ id: c.id, body: c.body })),
        };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/branches\/([^/]+)$/.exec(p)) && method === 'GET') {
        const r = await gitea(g, 'GET', `/repos/${m[1]}/branches/${m[2]}`);
        return {
          status: r.status,
          body: r.status === 200 ? { name: r.body.name, commit: { sha: r.body.commit.id } } : { message: 'Branch not found' },
        };
      }
      if ((m = /^\/repos\/([^/]+\/[^/]+)\/hooks$/.exec(p)) && method === 'POST') {
        ctx.hooks.set(m[1], [...(ctx.hooks.get(m[1]) ?? []), { url: body.config.url, secret: body.config.secret }]);
        return {
          status: 201,
          body: {
            id: ctx.hooks.get(m[1])!.length,
            active: true,
            events: body.events,
            config: { url: body.config.url, content_type: 'json' },
          },
        };
      }
      return { status: 404, body: { message: 'Not Found' } };
    },
    mergeEvent(repo, pr, secret) {
      const body = JSON.stringify({ action: 'closed', number: pr.number, pull_request: prView(pr), repository: { full_name: repo } });
      const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      return { headers: { 'x-github-event': 'pull_request', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': sig }, body };
    },
  };
}

function gitlabShapes(base: () => string, g: GiteaInfo): Shapes {
  const projectView = (r: Json) => ({
    id: r.id,
    path: r.name,
    name: r.name,
    path_with_namespace: r.full_name,
    http_url_to_repo: `${base()}/${r.full_name}.git`,
    visibility: r.private ? 'private' : 'public',
    default_branch: r.default_branch,
  });
  const mrView = (p: Json) => ({
    iid: p.number,
    web_url: `${base()}/${p.base.repo.full_name}/-/merge_requests/${p.number}`,
    state: p.merged ? 'merged' : p.state === 'closed' ? 'closed' : 'opened',
    source_branch: p.head.ref,
    target_branch: p.base.ref,
    sha: p.head.sha,
    merge_commit_sha: p.merge_commit_sha ?? null,
    title: p.title,
    description: p.body,
  });
  const gitlabState: Record<string, string> = {
    pending: 'pending',
    running: 'pending',
    success: 'success',
    failed: 'failure',
    canceled: 'error',
  };
  return {
    async route(method, path, body, ctx) {
      const p = path.replace(/^\/api\/v4/, '');
      let m: RegExpExecArray | null;
      if (method === 'GET' && p === '/user')
        return { status: 200, body: { username: g.username, name: 'Facade', email: 'facade@example.com' } };
      if (method === 'POST' && p === '/projects') {
        const r = await gitea(g, 'POST', '/user/repos', {
          name: body.path ?? body.name,
          private: body.visibility !== 'public',
          description: body.description,
        });
        return { status: r.status, body: r.status === 201 ? projectView(r.body) : { message: r.body } };
      }
      const proj = /^\/projects\/([^/]+)(\/.*)$/.exec(p);
      if (!proj) return { status: 404, body: { message: '404 Not Found' } };
      const repo = decodeURIComponent(proj[1]);
      const rest = proj[2];
      if (rest === '/merge_requests' && method === 'POST') {
        const r = await gitea(g, 'POST', `/repos/${repo}/pulls`, {
          head: body.source_branch,
          base: body.target_branch,
          title: body.title,
          body: body.description,
        });
        return { status: r.status, body: r.status === 201 ? mrView(r.body) : { message: r.body } };
      }
      if ((m = /^\/merge_requests\/(\d+)$/.exec(rest))) {
        const edit = method === 'PUT' ? { title: body.title, body: body.description } : undefined;
        const r = await gitea(g, method === 'PUT' ? 'PATCH' : 'GET', `/repos/${repo}/pulls/${m[1]}`, edit);
        return { status: r.status, body: r.status < 300 ? mrView(r.body) : { message: r.body } };
      }
      if ((m = /^\/merge_requests\/(\d+)\/merge$/.exec(rest)) && method === 'PUT') {
        const merged = await mergeOnGitea(g, repo, Number(m[1]));
        if (!merged) return { status: 405, body: { message: '405 Method Not Allowed' } };
        await ctx.deliver(repo, merged);
        return { status: 200, body: mrView(merged) };
      }
      if ((m = /^\/statuses\/([0-9a-f]{40})$/.exec(rest)) && method === 'POST') {
        const r = await gitea(g, 'POST', `/repos/${repo}/statuses/${m[1]}`, {
          state: gitlabState[body.state],
          context: body.name,
          description: body.description,
          target_url: body.target_url,
        });
        return { status: r.status, body: { status: body.state, name: body.name, target_url: body.target_url } };
      }
      if ((m = /^\/repository\/commits\/([0-9a-f]{40})\/statuses$/.exec(rest))) {
        const r = await gitea(g, 'GET', `/repos/${repo}/commits/${m[1]}/statuses`);
        const back: Record<string, string> = { pending: 'pending', success: 'success', failure: 'failed', error: 'canceled' };
        return {
          status: r.status,
          body: (r.body as Json[]).map((s) => ({ status: back[s.status], name: s.context, target_url: s.target_url })),
        };
      }
      if ((m = /^\/merge_requests\/(\d+)\/notes$/.exec(rest))) {
        const r = await gitea(g, method, `/repos/${repo}/issues/${m[1]}/comments`, method === 'POST' ? { body: body.body } : undefined);
        return {
          status: r.status,
          body: method === 'POST' ? { id: r.body.id, body: r.body.body } : (r.body as Json[]).map((c) => ({ id: c.id, body: c.body })),
        };
      }
      if ((m = /^\/repository\/branches\/([^/]+)$/.exec(rest)) && method === 'GET') {
        const r = await gitea(g, 'GET', `/repos/${repo}/branches/${m[1]}`);
        return {
          status: r.status,
          body: r.status === 200 ? { name: r.body.name, commit: { id: r.body.commit.id } } : { message: '404 Branch Not Found' },
        };
      }
      if (rest === '/hooks' && method === 'POST') {
        ctx.hooks.set(repo, [...(ctx.hooks.get(repo) ?? []), { url: body.url, secret: body.token }]);
        return { status: 201, body: { id: ctx.hooks.get(repo)!.length, url: body.url, merge_requests_events: body.merge_requests_events } };
      }
      return { status: 404, body: { message: '404 Not Found' } };
    },
    mergeEvent(repo, pr, secret) {
      const mr = mrView(pr);
      const body = JSON.stringify({
        object_kind: 'merge_request',
        event_type: 'merge_request',
        project: { path_with_namespace: repo },
        object_attributes: {
          iid: mr.iid,
          action: 'merge',
          state: 'merged',
          merge_commit_sha: mr.merge_commit_sha,
          target_branch: mr.target_branch,
          source_branch: mr.source_branch,
        },
      });
      return { headers: { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-event-uuid': randomUUID(), 'x-gitlab-token': secret }, body };
    },
  };
}
