import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../lib/egress/policy.ts';
import { detached } from '../../lib/detached.ts';
import { apiBase, gitProvider, GitProviderError } from '../../lib/git/providers.ts';

// GitHub and GitLab cannot run here: their adapters are tested against a local HTTP server that
// answers with the shapes of their public REST documentation, and checks how the token is sent.
const TOKEN = 'tok-0123456789abcdef';
let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; auth: string | undefined; body: any }> = [];

const ghRepo = (name: string, owner: string, priv = true) => ({
  id: 1,
  name,
  full_name: `${owner}/${name}`,
  private: priv,
  clone_url: `https://github.example/${owner}/${name}.git`,
  ssh_url: `git@github.example:${owner}/${name}.git`,
  default_branch: 'main',
  owner: { login: owner },
});
const glProject = (path: string, ns: string, visibility = 'private') => ({
  id: 7,
  name: path,
  path,
  path_with_namespace: `${ns}/${path}`,
  visibility,
  http_url_to_repo: `https://gitlab.example/${ns}/${path}.git`,
  default_branch: 'main',
});

async function bodyOf(req: IncomingMessage): Promise<any> {
  let s = '';
  for await (const c of req) s += c;
  return s ? JSON.parse(s) : undefined;
}

beforeAll(async () => {
  // Detached: a request handler cannot be awaited; a failing one is printed (and its test fails on the answer).
  server = createServer((req, res) => detached('the fake git provider', answer(req, res), console));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const body = await bodyOf(req);
    const url = req.url ?? '';
    const auth = (req.headers.authorization ?? req.headers['private-token']) as string | undefined;
    seen.push({ method: req.method!, url, auth, body });
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    const gh = url.startsWith('/api/v3/');
    const ok = gh ? req.headers.authorization === `Bearer ${TOKEN}` : req.headers['private-token'] === TOKEN;
    if (!ok)
      return json(
        401,
        gh ? { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } : { message: '401 Unauthorized' },
      );
    if (req.method === 'POST' && url === '/api/v3/orgs/chatty/repos')
      return json(422, {
        message: `Repository creation failed.\nYour token ${TOKEN} and session ghs_16C7e42F292c6912E7710c838347Ae178B4a were logged\r\n${'detail '.repeat(200)}`,
      });
    if (req.method === 'POST' && url === '/api/v3/orgs/proxied/repos') {
      res.writeHead(502, { 'content-type': 'text/html' });
      return res.end(`<html><body><h1>502 Bad Gateway</h1><p>${TOKEN}</p></body></html>`);
    }
    if (req.method === 'GET' && url === '/api/v3/user') return json(200, { login: 'octo', name: 'Octo Cat', email: null, id: 1 });
    if (req.method === 'GET' && url.startsWith('/api/v3/user/repos'))
      return json(200, url.includes('page=1') ? [ghRepo('dash-a', 'octo'), ghRepo('shared', 'someone-else')] : []);
    if (req.method === 'POST' && (url === '/api/v3/user/repos' || url === '/api/v3/orgs/acme/repos')) {
      if (body.name === 'taken')
        return json(422, {
          message: 'Repository creation failed.',
          errors: [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }],
        });
      return json(201, ghRepo(body.name, url.includes('acme') ? 'acme' : 'octo', body.private));
    }
    if (req.method === 'GET' && url === '/api/v4/user')
      return json(200, { id: 3, username: 'tanuki', name: 'Tanuki', public_email: 't@example.com' });
    if (req.method === 'GET' && url.startsWith('/api/v4/projects?membership=true'))
      return json(200, url.includes('page=1') ? [glProject('dash-b', 'tanuki'), glProject('other', 'grp')] : []);
    if (req.method === 'GET' && url === '/api/v4/namespaces/grp') return json(200, { id: 42, path: 'grp', kind: 'group' });
    if (req.method === 'POST' && url === '/api/v4/projects') {
      if (body.name === 'taken') return json(400, { message: { name: ['has already been taken'], path: ['has already been taken'] } });
      return json(201, glProject(body.path, body.namespace_id === 42 ? 'grp' : 'tanuki', body.visibility));
    }
    json(404, { message: 'Not Found' });
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('GitHub adapter (documented shapes)', () => {
  it('maps github.com to its API host and an Enterprise server to /api/v3', () => {
    expect(apiBase('github', 'https://github.com/')).toBe('https://api.github.com');
    expect(apiBase('github', 'https://ghe.example/')).toBe('https://ghe.example/api/v3');
    expect(apiBase('gitlab', 'https://gitlab.example')).toBe('https://gitlab.example/api/v4');
  });

  it('who am I, repositories of the owner, create (user and organisation), normalised', async () => {
    const p = gitProvider({ provider: 'github', baseUrl: base, owner: 'octo', token: TOKEN });
    expect(await p.whoami()).toEqual({ login: 'octo', name: 'Octo Cat', email: null });
    expect(await p.listRepositories()).toEqual([
      {
        name: 'dash-a',
        full_name: 'octo/dash-a',
        clone_url: 'https://github.example/octo/dash-a.git',
        private: true,
        default_branch: 'main',
      },
    ]);
    expect(await p.createRepository({ name: 'dash-new', private: false })).toEqual({
      name: 'dash-new',
      full_name: 'octo/dash-new',
      clone_url: 'https://github.example/octo/dash-new.git',
      private: false,
      default_branch: 'main',
    });
    const org = gitProvider({ provider: 'github', baseUrl: base, owner: 'acme', token: TOKEN });
    expect((await org.createRepository({ name: 'x', private: true })).full_name).toBe('acme/x');
    expect(seen.filter((s) => s.url.startsWith('/api/v3/')).every((s) => s.auth === `Bearer ${TOKEN}`)).toBe(true);
  });

  it("refusals carry the provider's status and message", async () => {
    const bad = gitProvider({ provider: 'github', baseUrl: base, owner: 'octo', token: 'wrong' });
    const e = await bad.whoami().catch((x) => x);
    expect(e).toBeInstanceOf(GitProviderError);
    expect(e.status).toBe(400);
    expect(e.upstreamStatus).toBe(401);
    expect(e.message).toContain('Bad credentials');
    const taken = await gitProvider({ provider: 'github', baseUrl: base, owner: 'octo', token: TOKEN })
      .createRepository({ name: 'taken', private: true })
      .catch((x) => x);
    expect(taken.upstreamStatus).toBe(422);
    expect(taken.message).toContain('Repository creation failed.');
    const down = await gitProvider({ provider: 'github', baseUrl: 'http://127.0.0.1:9', owner: 'o', token: TOKEN })
      .whoami()
      .catch((x) => x);
    expect(down).toBeInstanceOf(GitProviderError);
    expect(down.message).toMatch(/cannot reach/);
  });
});

describe('GitLab adapter (documented shapes)', () => {
  it('who am I, projects of the owner, create in the user namespace and in a group', async () => {
    const p = gitProvider({ provider: 'gitlab', baseUrl: base, owner: 'tanuki', token: TOKEN });
    expect(await p.whoami()).toEqual({ login: 'tanuki', name: 'Tanuki', email: 't@example.com' });
    expect(await p.listRepositories()).toEqual([
      {
        name: 'dash-b',
        full_name: 'tanuki/dash-b',
        clone_url: 'https://gitlab.example/tanuki/dash-b.git',
        private: true,
        default_branch: 'main',
      },
    ]);
    expect((await p.createRepository({ name: 'mine', private: true })).full_name).toBe('tanuki/mine');
    const group = gitProvider({ provider: 'gitlab', baseUrl: base, owner: 'grp', token: TOKEN });
    expect(await group.createRepository({ name: 'shared', private: false })).toEqual({
      name: 'shared',
      full_name: 'grp/shared',
      clone_url: 'https://gitlab.example/grp/shared.git',
      private: false,
      default_branch: 'main',
    });
    expect(seen.find((s) => s.method === 'POST' && s.url === '/api/v4/projects' && s.body.path === 'shared')?.body.namespace_id).toBe(42);
    expect(seen.filter((s) => s.url.startsWith('/api/v4/')).every((s) => s.auth === TOKEN)).toBe(true);
    const taken = await p.createRepository({ name: 'taken', private: true }).catch((x) => x);
    expect(taken.upstreamStatus).toBe(400);
    expect(taken.message).toContain('has already been taken');
  });
});

describe('what a provider said, as passed on', () => {
  it('is its status and one short line: no newlines, markup, the token or anything like one', async () => {
    const chatty = await gitProvider({ provider: 'github', baseUrl: base, owner: 'chatty', token: TOKEN })
      .createRepository({ name: 'x', private: true })
      .catch((x) => x);
    expect(chatty).toBeInstanceOf(GitProviderError);
    expect(chatty.upstreamStatus).toBe(422);
    expect(chatty.message).toMatch(
      /^github: creating a repository failed: HTTP 422: Repository creation failed\. Your token \[REDACTED\] and session \[REDACTED\] were logged detail/,
    );
    expect(chatty.message).not.toMatch(/[\r\n]/);
    expect(chatty.message).not.toContain(TOKEN);
    expect(chatty.message).not.toContain('ghs_');
    expect(chatty.message.length).toBeLessThan(300);
    expect(chatty.extra.reason).toBe(chatty.message.replace(/^github: creating a repository failed: /, ''));

    const proxied = await gitProvider({ provider: 'github', baseUrl: base, owner: 'proxied', token: TOKEN })
      .createRepository({ name: 'x', private: true })
      .catch((x) => x);
    expect(proxied.upstreamStatus).toBe(502);
    expect(proxied.message).toBe('github: creating a repository failed: HTTP 502');
  });

  it('is never asked for when ALLOWED_UPSTREAM_HOSTS does not allow the provider: nothing is sent', async () => {
    const before = seen.length;
    const fenced = gitProvider({
      provider: 'github',
      baseUrl: base,
      owner: 'octo',
      token: TOKEN,
      egress: EgressPolicy.parse(['git.example.com']),
    });
    await expect(fenced.whoami()).rejects.toMatchObject({ code: 'host_not_allowed', status: 503 });
    expect(seen.length).toBe(before);
    const allowed = gitProvider({
      provider: 'github',
      baseUrl: base,
      owner: 'octo',
      token: TOKEN,
      egress: EgressPolicy.parse(['127.0.0.1']),
    });
    expect((await allowed.whoami()).login).toBe('octo');
  });
});
