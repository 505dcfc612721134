// A git config's token goes to that config's own server only, and every git connection follows
// ALLOWED_UPSTREAM_HOSTS: a repository whose remote is on another host, scheme or port is refused
// before anything is sent (409 remote_host_mismatch); a remote or provider the policy does not allow
// is never contacted; configs outside the policy are refused when stored. Against a listener that
// records what reaches it and, for the round trip through the policy, the run's real Gitea.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../lib/egress/policy.ts';
import { gitProvider } from '../../lib/git/providers.ts';
import { WorkingCopy, type Credentials } from '../../lib/git/working-copy.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { gitea } from './support.ts';

const author = { name: 'T', email: 't@example.com' };
const received: string[] = [];
let listener: http.Server;
let listenerUrl: string;
let h: Harness;
beforeAll(async () => {
  listener = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
    res.writeHead(401, { 'www-authenticate': 'Basic realm="x"' }).end();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  h = await createHarness({ env: { ALLOWED_UPSTREAM_HOSTS: 'github.com, gitlab.example.com, 10.0.0.0/8' } });
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => listener?.close(r));
});

async function workingCopy(remoteUrl: string, egress?: EgressPolicy): Promise<WorkingCopy> {
  const wc = new WorkingCopy(fs.mkdtempSync(path.join(os.tmpdir(), 'remote-destination-')), { egress });
  await wc.init({ branch: 'main', remoteUrl, author, readme: '# x\n' });
  return wc;
}

const creds = (origin: string): Credentials => ({ username: 'switchyard', token: 'config-token-5be1f0', origin });

describe("the token goes to its config's server only", () => {
  it('refuses a remote on another port, scheme or host before anything is sent (409 remote_host_mismatch)', async () => {
    const wc = await workingCopy(`${listenerUrl}/owner/dash.git`);
    const port = new URL(listenerUrl).port;
    for (const configOrigin of ['http://127.0.0.1:1', `https://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      for (const call of [() => wc.push(creds(configOrigin)), () => wc.fetch(creds(configOrigin))]) {
        await expect(call(), configOrigin).rejects.toMatchObject({ status: 409, code: 'remote_host_mismatch' });
      }
    }
    expect(received).toEqual([]);
    // Its own server is asked (and refuses the token here): the mismatch was the only reason above.
    await expect(wc.fetch(creds(listenerUrl))).rejects.toMatchObject({ code: 'git_auth_failed' });
    expect(received.length).toBeGreaterThan(0);
  });

  it('never contacts a remote ALLOWED_UPSTREAM_HOSTS does not allow (503 host_not_allowed)', async () => {
    received.length = 0;
    const wc = await workingCopy(`${listenerUrl}/owner/dash.git`, EgressPolicy.parse(['git.example.com']));
    await expect(wc.fetch(null)).rejects.toMatchObject({ status: 503, code: 'host_not_allowed' });
    await expect(wc.push(creds(listenerUrl))).rejects.toMatchObject({ status: 503, code: 'host_not_allowed' });
    expect(received).toEqual([]);
  });
});

describe('git configs under ALLOWED_UPSTREAM_HOSTS', () => {
  const admin = (method: string, p: string, json?: unknown) => h.request(method, p, { token: h.adminToken, json });
  it("refuses a server, or its provider's API host, outside the policy (400 host_not_allowed), storing nothing", async () => {
    for (const [provider, base_url] of [
      ['gitea', listenerUrl],
      ['github', 'https://github.com'], // its API is api.github.com, not listed
      ['gitlab', 'https://evil.example.com'],
    ]) {
      const r = await admin('POST', '/api/git/configs', { name: `c-${provider}`, provider, base_url, owner: 'o', pat: 't' });
      expect(r.status, `${base_url}: ${r.text}`).toBe(400);
      expect(r.body.code).toBe('host_not_allowed');
    }
    expect(await h.knex('git_configs')).toHaveLength(0);
    const ok = await admin('POST', '/api/git/configs', {
      name: 'lab',
      provider: 'gitlab',
      base_url: 'https://gitlab.example.com',
      owner: 'o',
      pat: 't',
    });
    expect(ok.status, ok.text).toBe(201);
    const moved = await admin('PUT', `/api/git/configs/${ok.body.id}`, { base_url: listenerUrl, pat: 't2' });
    expect(moved.status).toBe(400);
    expect(moved.body.code).toBe('host_not_allowed');
    expect((await h.knex('git_configs').where({ id: ok.body.id }).first()).base_url).toBe('https://gitlab.example.com');
    expect(received.filter((r) => r.startsWith('POST') || r.includes('/api/'))).toEqual([]);
  });
});

const g = gitea();
describe.skipIf(!g)('through the policy to the real Gitea', () => {
  it('creates a repository, pushes and fetches with the token, every connection through the policy', async () => {
    const egress = EgressPolicy.parse(['127.0.0.0/8']);
    const origin = new URL(g!.baseUrl).origin;
    const provider = gitProvider({ provider: 'gitea', baseUrl: g!.baseUrl, owner: g!.username, token: g!.token, egress });
    const repo = await provider.createRepository({ name: `egress-${Date.now().toString(36)}`, private: true, defaultBranch: 'main' });
    expect(new URL(repo.clone_url).origin).toBe(origin);
    const wc = await workingCopy(repo.clone_url, egress);
    const own: Credentials = { username: g!.username, token: g!.token, origin };
    const pushed = await wc.push(own);
    expect(pushed.pushed).toBe(true);
    const again = await workingCopy(repo.clone_url, egress);
    expect(await again.fetch(own)).toBe(pushed.commit);
  });
});
