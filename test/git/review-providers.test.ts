import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { uniquePrefix } from '../support/environments.ts';
import { startReviewFacade, type FacadeKind, type ReviewFacade } from '../support/review-facade.ts';
import type { SupersetClient } from '../support/superset/fixtures.ts';
import type { SourceFixture } from '../dashboard-migration/support.ts';
import {
  buildSource,
  client,
  dashboardTitle,
  enabled,
  gitea,
  giteaDiagnostics,
  registerEnvironment,
  renameDashboard,
  setIdentity,
  targetDatabase,
  waitTask,
} from './support.ts';

// The review loop's GitHub and GitLab adapters: the same flow as against Gitea (review-loop.test.ts)
// through a local server answering each provider's documented shapes over the real Gitea
// (test/support/review-facade.ts: no real GitHub or GitLab can run here): a branch, a commit, a
// pull (merge) request with the preview in its body, the status read back through the
// provider's API, the merge through it, the provider's own signed delivery, the deploy into b, and
// the result commented. A delivery signed with another secret is refused and starts nothing.
const on = enabled() && inject('supersets') !== null;
const P = uniquePrefix('rp');
/** A bound for hangs only: the test's own timeout is the same. */
const LOOP_MS = 600_000;
const KINDS: FacadeKind[] = ['github', 'gitlab'];
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
const facades = {} as Record<FacadeKind, ReviewFacade>;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

/** The provider's REST API as a reviewer uses it, in its own dialect. */
async function providerApi(f: ReviewFacade, method: string, p: string, json?: unknown): Promise<{ status: number; body: any }> {
  const auth: Record<string, string> = f.kind === 'github' ? { authorization: `Bearer ${f.token}` } : { 'private-token': f.token };
  const prefix = f.kind === 'github' ? '/api/v3' : '/api/v4';
  const r = await fetch(`${f.baseUrl}${prefix}${p}`, {
    method,
    headers: { ...auth, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  const db = await targetDatabase(b, P, dir);
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(m.status, m.text).toBe(200);
  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  for (const kind of KINDS) facades[kind] = await startReviewFacade(kind, gitea()!);
}, 300_000);
afterAll(async () => {
  for (const f of Object.values(facades)) await f.stop();
  await h?.close();
});

describe.skipIf(!on).each(KINDS.map((kind, i) => ({ kind, i })))('the review loop through $kind', ({ kind, i }) => {
  it(
    'branch, commit, pull request with the preview, status, merge, the provider delivery, deploy and comment',
    async () => {
      const f = facades[kind];
      const dash = src.dashboards[i].id;
      const G = (op: string) => `/api/git/dashboards/${dash}/${op}`;
      const secret = `whsec-${randomUUID()}`;
      const c = await admin('POST', '/api/git/configs', {
        json: { name: `${P}-${kind}`, provider: kind, base_url: f.baseUrl, owner: gitea()!.username, pat: f.token },
      });
      expect(c.status, c.text).toBe(201);
      const configId = c.body.id;
      const init = await admin('POST', G('init'), { json: { env_id: envA, config_id: configId, create_remote: true } });
      expect(init.status, init.text).toBe(200);
      const uuid = init.body.dashboard_uuid;
      const repo = `${gitea()!.username}/dashboard-${uuid}`;
      const project = encodeURIComponent(repo);
      expect((await admin('POST', G('sync'), { json: { env_id: envA } })).status).toBe(200);
      expect((await admin('POST', G('commit'), { json: { env_id: envA, message: 'As first exported' } })).status).toBe(200);
      expect((await admin('POST', G('push'), { json: { env_id: envA } })).status).toBe(200);
      expect((await admin('PUT', `/api/git/configs/${configId}/webhook`, { json: { secret } })).status).toBe(200);
      const hook =
        kind === 'github'
          ? await providerApi(f, 'POST', `/repos/${repo}/hooks`, {
              name: 'web',
              events: ['pull_request'],
              config: { url: `${h.baseUrl}/api/git/webhooks/${configId}`, content_type: 'json', secret },
            })
          : await providerApi(f, 'POST', `/projects/${project}/hooks`, {
              url: `${h.baseUrl}/api/git/webhooks/${configId}`,
              token: secret,
              merge_requests_events: true,
            });
      expect(hook.status).toBe(201);

      await renameDashboard(a, dash, `${P} ${kind} reviewed`);
      expect((await admin('POST', G('sync'), { json: { env_id: envA, branch: `${P}-${kind}` } })).status).toBe(200);
      const commit = await admin('POST', G('commit'), { json: { env_id: envA, message: 'Rename', branch: `${P}-${kind}` } });
      expect(commit.status, commit.text).toBe(200);
      const pr = await admin('POST', G('pull-requests'), {
        json: { env_id: envA, branch: `${P}-${kind}`, title: 'Rename', target_env_id: envB },
      });
      if (pr.status !== 201) expect.fail(`${pr.text}\n${await giteaDiagnostics(repo)}`);
      const number = pr.body.pull_request.number;
      const preview = await waitTask(h, pr.body.preview_task_id, LOOP_MS);
      expect(preview.status, JSON.stringify(preview.result ?? preview.error)).toBe('SUCCEEDED');

      const read = await providerApi(
        f,
        'GET',
        kind === 'github' ? `/repos/${repo}/pulls/${number}` : `/projects/${project}/merge_requests/${number}`,
      );
      const body: string = kind === 'github' ? read.body.body : read.body.description;
      expect(body).toContain('### What the deploy would do');
      expect(body).toMatch(/\d+\/\d+ chart queries pass/);
      const statuses = await providerApi(
        f,
        'GET',
        kind === 'github'
          ? `/repos/${repo}/commits/${commit.body.commit}/statuses`
          : `/projects/${project}/repository/commits/${commit.body.commit}/statuses`,
      );
      const ours = statuses.body.filter((s: any) => (s.context ?? s.name) === 'switchyard/preview').map((s: any) => s.state ?? s.status);
      expect(ours).toEqual(expect.arrayContaining(['pending', 'success']));

      // Signed with another secret: refused, nothing started.
      const forged = JSON.stringify({ object_kind: 'merge_request', action: 'closed', pull_request: { number, merged: true } });
      const forgedHeaders: Record<string, string> =
        kind === 'github'
          ? { 'x-github-event': 'pull_request', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }
          : { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-event-uuid': randomUUID(), 'x-gitlab-token': 'not-the-secret-0123456789' };
      const refused = await h.request('POST', `/api/git/webhooks/${configId}`, {
        raw: forged,
        headers: { 'content-type': 'application/json', ...forgedHeaders },
      });
      expect(refused.status, refused.text).toBe(401);

      const merged = await providerApi(
        f,
        'PUT',
        kind === 'github' ? `/repos/${repo}/pulls/${number}/merge` : `/projects/${project}/merge_requests/${number}/merge`,
        {},
      );
      expect(merged.status, JSON.stringify(merged.body)).toBe(200);
      expect(f.deliveries.at(-1)?.status).toBe(202);
      const row = await waitFor(
        async () => {
          const r = await admin('GET', `${G(`pull-requests/${number}`)}?env_id=${envA}`);
          return r.body.deploy_task_id ? r.body : undefined;
        },
        LOOP_MS,
        'the deploy of the merge',
      );
      const task = await waitTask(h, row.deploy_task_id, LOOP_MS);
      expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
      expect(task.result.items[0].commit).toBe(row.merge_commit);
      expect(await dashboardTitle(b, uuid)).toBe(`${P} ${kind} reviewed`);
      const comments = await waitFor(
        async () => {
          const r = await providerApi(
            f,
            'GET',
            kind === 'github' ? `/repos/${repo}/issues/${number}/comments` : `/projects/${project}/merge_requests/${number}/notes`,
          );
          const texts: string[] = r.body.map((x: any) => x.body);
          return texts.some((t) => t.includes('**deployed**')) ? texts : undefined;
        },
        LOOP_MS,
        'the result comment',
      );
      expect(comments.some((t) => t.startsWith('Merged: Switchyard is deploying'))).toBe(true);
    },
    LOOP_MS,
  );
});
