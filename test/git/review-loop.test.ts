import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { uniquePrefix } from '../support/environments.ts';
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
  userWith,
  waitTask,
} from './support.ts';

// The review loop against the real Gitea and two real Superset instances (a → b), a real worker
// on PostgreSQL and Temporal: a branch, a change committed onto it, a pull request whose body
// Switchyard writes from a dry-run deploy and the charts' verdicts, `switchyard/preview` read
// back through Gitea's API, the merge through Gitea's API, the webhook delivered by Gitea itself,
// the deploy SUCCEEDED with b showing the change, and the result commented on the pull request.
// Forged and replayed deliveries are refused and start nothing.
const on = enabled() && inject('supersets') !== null;
const P = uniquePrefix('rv');
/** A bound for hangs only (Gitea's queue, the worker on a busy machine): the test's own timeout is the same. */
const LOOP_MS = 600_000;
/** A hang bound on Gitea's delivery, below the test's timeout so that a missing one fails with what Switchyard did take. */
const DELIVERY_MS = 240_000;
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
let dash: number;
let configId: string;
let repo: string;
let uuid: string;
let operator: string;
let viewer: string;
/** The dashboard the merge deployed into b. */
let deployedId: number;
/** What Gitea said while taking the first push (its post-receive hook's output), for a failure to show. */
let firstPushSaid: string[] = [];
const SECRET = `whsec-${randomUUID()}`;

const G = (op: string) => `/api/git/dashboards/${dash}/${op}`;
const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

/** Gitea's own REST API, as the test's second person (a reviewer) uses it. */
async function giteaApi(method: string, p: string, json?: unknown): Promise<{ status: number; body: any }> {
  const g = gitea()!;
  const r = await fetch(`${g.baseUrl}/api/v1${p}`, {
    method,
    headers: { authorization: `token ${g.token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');
const deliver = (body: string, headers: Record<string, string>) =>
  h.request('POST', `/api/git/webhooks/${configId}`, { raw: body, headers: { 'content-type': 'application/json', ...headers } });
const tasksOfType = async (type: string) => Number((await h.knex('tasks').where({ type }).count({ n: '*' }))[0].n);

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 1 });
  dash = src.dashboards[0].id;
  const db = await targetDatabase(b, P, dir);
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(m.status, m.text).toBe(200);
  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  operator = await userWith(h, `${P}-op`, ['Operator']);
  viewer = await userWith(h, `${P}-v`, ['Viewer']);
  await setIdentity(h, operator, 'Oscar Operator', 'oscar@example.com');
  const g = gitea()!;
  const c = await admin('POST', '/api/git/configs', {
    json: { name: `${P}-gitea`, provider: 'gitea', base_url: g.baseUrl, owner: g.username, pat: g.token },
  });
  expect(c.status, c.text).toBe(201);
  configId = c.body.id;
  const init = await admin('POST', G('init'), { json: { env_id: envA, config_id: configId, create_remote: true } });
  expect(init.status, init.text).toBe(200);
  uuid = init.body.dashboard_uuid;
  repo = `${g.username}/dashboard-${uuid}`;
  expect((await admin('POST', G('sync'), { json: { env_id: envA } })).status).toBe(200);
  expect((await admin('POST', G('commit'), { json: { env_id: envA, message: 'As first exported' } })).status).toBe(200);
  const pushed = await admin('POST', G('push'), { json: { env_id: envA } });
  expect(pushed.status, pushed.text).toBe(200);
  firstPushSaid = pushed.body.remote_messages;
}, 300_000);
afterAll(async () => h?.close());

describe.skipIf(!on)('branches', () => {
  it('creates, lists, switches and deletes; a switch with local changes is refused; a viewer may only list', async () => {
    const made = await admin('POST', G('branches'), { json: { env_id: envA, name: `${P}/scratch`, checkout: false } });
    expect(made.status, made.text).toBe(201);
    const list = await admin('GET', `${G('branches')}?env_id=${envA}`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.current).toBe('main');
    expect(list.body.items.map((x: any) => x.name)).toEqual(expect.arrayContaining(['main', `${P}/scratch`]));
    expect(list.body.items.find((x: any) => x.name === 'main').remote_commit).toBe(
      list.body.items.find((x: any) => x.name === 'main').commit,
    );
    const sw = await admin('POST', G(`branches/${encodeURIComponent(`${P}/scratch`)}/switch`), { json: { env_id: envA } });
    expect(sw.status, sw.text).toBe(200);
    expect((await admin('GET', `${G('status')}?env_id=${envA}`)).body.branch).toBe(`${P}/scratch`);
    const current = await admin('DELETE', `${G(`branches/${encodeURIComponent(`${P}/scratch`)}`)}?env_id=${envA}`);
    expect(current.status, current.text).toBe(409);
    expect(current.body.code).toBe('current_branch');
    expect((await admin('POST', G('branches/main/switch'), { json: { env_id: envA } })).status).toBe(200);
    const del = await admin('DELETE', `${G(`branches/${encodeURIComponent(`${P}/scratch`)}`)}?env_id=${envA}`);
    expect(del.status, del.text).toBe(200);
    expect((await admin('POST', G('branches/nope/switch'), { json: { env_id: envA } })).status).toBe(404);
    expect((await admin('POST', G('branches'), { json: { env_id: envA, name: '../etc' } })).status).toBe(400);
    expect((await h.request('POST', G('branches'), { token: viewer, json: { env_id: envA, name: `${P}-v` } })).status).toBe(403);
    expect((await h.request('GET', `${G('branches')}?env_id=${envA}`, { token: viewer })).status).toBe(200);
  });
});

describe.skipIf(!on)('the review loop against the real Gitea', () => {
  let number: number;
  let headCommit: string;
  let hookId: number;

  it('sets the webhook (secret write-only, encrypted) and Gitea delivers to Switchyard', async () => {
    expect((await h.request('PUT', `/api/git/configs/${configId}/webhook`, { token: operator, json: { secret: SECRET } })).status).toBe(
      403,
    );
    const set = await admin('PUT', `/api/git/configs/${configId}/webhook`, { json: { secret: SECRET } });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ configured: true, secret: '********', owner: 'admin', url: `/api/git/webhooks/${configId}` });
    expect(JSON.stringify((await admin('GET', `/api/git/configs/${configId}/webhook`)).body)).not.toContain(SECRET);
    const row = await h.knex('git_webhooks').where({ config_id: configId }).first();
    expect(row.secret_encrypted).not.toContain(SECRET);
    const hook = await giteaApi('POST', `/repos/${repo}/hooks`, {
      type: 'gitea',
      active: true,
      events: ['pull_request'],
      config: { url: `${h.baseUrl}/api/git/webhooks/${configId}`, content_type: 'json', secret: SECRET },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    hookId = hook.body.id;
  });

  it(
    'commits a change onto a new branch and opens a pull request whose body holds the dry-run diff and the verdicts',
    async () => {
      await renameDashboard(a, dash, `${P} reviewed`);
      const synced = await h.request('POST', G('sync'), { token: operator, json: { env_id: envA, branch: `${P}-rename` } });
      expect(synced.status, synced.text).toBe(200);
      expect(synced.body.changed.some((f: string) => f.startsWith('dashboards/'))).toBe(true);
      const c = await h.request('POST', G('commit'), {
        token: operator,
        json: { env_id: envA, message: 'Rename the dashboard', branch: `${P}-rename` },
      });
      expect(c.status, c.text).toBe(200);
      headCommit = c.body.commit;
      expect((await admin('GET', `${G('status')}?env_id=${envA}`)).body.branch).toBe(`${P}-rename`);

      expect(
        (
          await h.request('POST', G('pull-requests'), {
            token: viewer,
            json: { env_id: envA, branch: `${P}-rename`, title: 'x', target_env_id: envB },
          })
        ).status,
      ).toBe(403);
      const pr = await h.request('POST', G('pull-requests'), {
        token: operator,
        json: { env_id: envA, branch: `${P}-rename`, title: 'Rename the dashboard', description: 'Asked by sales.', target_env_id: envB },
      });
      if (pr.status !== 201)
        expect.fail(`${pr.text}\nthe first push, Gitea said: ${firstPushSaid.join(' | ')}\n${await giteaDiagnostics(repo)}`);
      number = pr.body.pull_request.number;
      expect(pr.body.pull_request).toMatchObject({
        state: 'open',
        head_branch: `${P}-rename`,
        base_branch: 'main',
        head_commit: headCommit,
      });
      const again = await h.request('POST', G('pull-requests'), {
        token: operator,
        json: { env_id: envA, branch: `${P}-rename`, title: 'again', target_env_id: envB },
      });
      expect(again.status, again.text).toBe(409);
      expect(again.body.code).toBe('pull_request_exists');

      const preview = await waitTask(h, pr.body.preview_task_id, LOOP_MS);
      const logs = preview.status === 'SUCCEEDED' ? '' : (await admin('GET', `/api/tasks/${pr.body.preview_task_id}/logs?limit=200`)).text;
      expect(preview.status, `${JSON.stringify(preview.result ?? preview.error)}\n${logs}`).toBe('SUCCEEDED');
      expect(preview.type).toBe('git_preview');
      expect(preview.result.plan).toMatchObject({ status: 'planned', outcome: 'succeeded', commit: headCommit });
      expect(preview.result.verification.ok).toBe(true);
      // The dry run wrote nothing into b.
      expect(await dashboardTitle(b, uuid)).toBeNull();

      const onGitea = await giteaApi('GET', `/repos/${repo}/pulls/${number}`);
      expect(onGitea.status).toBe(200);
      const body: string = onGitea.body.body;
      expect(body.startsWith('Asked by sales.')).toBe(true);
      expect(body).toContain('### What the deploy would do');
      expect(body).toMatch(/\*\*\d+ created, \d+ updated, \d+ unchanged/);
      expect(body).toContain(`${P} reviewed`);
      expect(body).toContain('### Companions');
      expect(body).toContain('### Verification');
      expect(body).toMatch(/\d+\/\d+ chart queries pass/);
      expect(body).toContain(pr.body.preview_task_id);
    },
    LOOP_MS,
  );

  it("posts switchyard/preview on the head commit, read back through Gitea's API", async () => {
    const st = await giteaApi('GET', `/repos/${repo}/commits/${headCommit}/statuses`);
    expect(st.status).toBe(200);
    const ours = st.body.filter((s: any) => s.context === 'switchyard/preview');
    expect(ours.map((s: any) => s.status)).toEqual(expect.arrayContaining(['pending', 'success']));
    const last = ours.find((s: any) => s.status === 'success');
    expect(last.target_url).toContain('/api/tasks/git_preview-');
    // b has no copy yet, so no validation of one: no switchyard/validation status.
    expect(st.body.some((s: any) => s.context === 'switchyard/validation')).toBe(false);
    const view = await admin('GET', `${G(`pull-requests/${number}`)}?env_id=${envA}`);
    expect(view.body.preview_state).toBe('success');
  });

  it('refuses a forged delivery (401) and one with no webhook (404); neither is stored or starts anything', async () => {
    const before = await tasksOfType('git_deploy');
    const payload = JSON.stringify({
      action: 'closed',
      number,
      pull_request: { number, merged: true, merge_commit_sha: 'a'.repeat(40), base: { ref: 'main' } },
      repository: { full_name: repo },
    });
    const headers = { 'x-gitea-event': 'pull_request', 'x-gitea-delivery': randomUUID() };
    const forged = await deliver(payload, { ...headers, 'x-gitea-signature': sign(payload, 'not-the-secret-0123456789') });
    expect(forged.status, forged.text).toBe(401);
    expect(forged.body.code).toBe('invalid_signature');
    expect((await deliver(payload, headers)).status).toBe(401);
    const unknown = await h.request('POST', '/api/git/webhooks/00000000-0000-0000-0000-000000000000', {
      raw: payload,
      headers: { 'content-type': 'application/json', ...headers, 'x-gitea-signature': sign(payload) },
    });
    expect(unknown.status).toBe(404);
    expect(
      await h.knex('git_webhook_deliveries').where({ config_id: configId, delivery_id: headers['x-gitea-delivery'] }).first(),
    ).toBeUndefined();
    expect(await tasksOfType('git_deploy')).toBe(before);
  });

  it(
    'merges through Gitea: Gitea delivers the webhook, the merge commit is deployed into b, and the result is commented',
    async () => {
      const merged = await giteaApi('POST', `/repos/${repo}/pulls/${number}/merge`, {
        Do: 'merge',
        merge_message_field: 'Merge the rename',
      });
      expect(merged.status, JSON.stringify(merged.body)).toBe(200);
      const pr = await giteaApi('GET', `/repos/${repo}/pulls/${number}`);
      expect(pr.body.merged).toBe(true);
      const mergeSha: string = pr.body.merge_commit_sha;

      const row = await waitFor(
        async () => {
          const r = await admin('GET', `${G(`pull-requests/${number}`)}?env_id=${envA}`);
          return r.body.deploy_task_id ? r.body : undefined;
        },
        DELIVERY_MS,
        "Gitea's delivery of the merge",
      ).catch(async (err: Error) => {
        const seen = await h.knex('git_webhook_deliveries').where({ config_id: configId });
        throw new Error(`${err.message}; deliveries: ${JSON.stringify(seen)}`);
      });
      expect(row).toMatchObject({ state: 'merged', merge_commit: mergeSha });
      // The delivery is settled once the deploy started and the pull request was told (after the row above moved).
      const delivery = await waitFor(
        () => h.knex('git_webhook_deliveries').where({ config_id: configId, task_id: row.deploy_task_id }).first(),
        DELIVERY_MS,
        'the delivery settled',
      );
      expect(delivery.outcome).toBe('deploying');

      const task = await waitTask(h, row.deploy_task_id, LOOP_MS);
      expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
      expect(task.type).toBe('git_deploy');
      expect(task.owner_username).toBe('admin');
      expect(task.result.items[0]).toMatchObject({ status: 'deployed', commit: mergeSha, target_env_id: envB });
      expect(await dashboardTitle(b, uuid)).toBe(`${P} reviewed`);
      deployedId = task.result.items[0].target_dashboard_id;

      const comments = await waitFor(
        async () => {
          const c = await giteaApi('GET', `/repos/${repo}/issues/${number}/comments`);
          const bodies: string[] = c.body.map((x: any) => x.body);
          return bodies.some((t) => t.includes('deployed')) ? bodies : undefined;
        },
        LOOP_MS,
        'the result comment',
      );
      expect(comments.some((t) => t.startsWith('Merged: Switchyard is deploying'))).toBe(true);
      const result = comments.find((t) => t.includes(`as dashboard ${task.result.items[0].target_dashboard_id}: **deployed**`));
      expect(result, comments.join('\n---\n')).toBeTruthy();
      expect(result).toContain(row.deploy_task_id);

      // A replay of Gitea's own delivery id, however well signed, is refused and starts nothing.
      const before = await tasksOfType('git_deploy');
      const payload = JSON.stringify({
        action: 'closed',
        number,
        pull_request: { number, merged: true, merge_commit_sha: mergeSha, base: { ref: 'main' } },
        repository: { full_name: repo },
      });
      const replay = await deliver(payload, {
        'x-gitea-event': 'pull_request',
        'x-gitea-delivery': delivery.delivery_id,
        'x-gitea-signature': sign(payload),
      });
      expect(replay.status, replay.text).toBe(409);
      expect(replay.body.code).toBe('replayed_delivery');
      // A new delivery of the same merge (a redelivery with a new id) starts nothing either.
      const fresh = await deliver(payload, {
        'x-gitea-event': 'pull_request',
        'x-gitea-delivery': randomUUID(),
        'x-gitea-signature': sign(payload),
      });
      expect(fresh.status, fresh.text).toBe(200);
      expect(fresh.body.outcome).toBe('ignored');
      expect(await tasksOfType('git_deploy')).toBe(before);
      await giteaApi('DELETE', `/repos/${repo}/hooks/${hookId}`);
    },
    LOOP_MS,
  );

  it(
    "posts b's last validation of the dashboard as switchyard/validation on the next pull request's head commit",
    async () => {
      const v = await admin('POST', `/api/environments/${envB}/validate`, { json: { dashboard_ids: [deployedId] } });
      expect(v.status, v.text).toBe(202);
      const validated = await waitTask(h, v.body.task_id, LOOP_MS);
      expect(validated.status, JSON.stringify(validated.result ?? validated.error)).toBe('SUCCEEDED');

      await renameDashboard(a, dash, `${P} reviewed again`);
      const branch = `${P}-again`;
      expect((await admin('POST', G('sync'), { json: { env_id: envA, branch } })).status).toBe(200);
      const c = await admin('POST', G('commit'), { json: { env_id: envA, message: 'Rename again', branch } });
      expect(c.status, c.text).toBe(200);
      const pr = await admin('POST', G('pull-requests'), { json: { env_id: envA, branch, title: 'Rename again', target_env_id: envB } });
      if (pr.status !== 201)
        expect.fail(`${pr.text}\nthe first push, Gitea said: ${firstPushSaid.join(' | ')}\n${await giteaDiagnostics(repo)}`);
      const preview = await waitTask(h, pr.body.preview_task_id, LOOP_MS);
      expect(preview.status, JSON.stringify(preview.result ?? preview.error)).toBe('SUCCEEDED');
      expect(preview.result.plan.target_dashboard_id).toBe(deployedId);
      expect(preview.result.validation).toMatchObject({ state: 'success' });

      const st = await giteaApi('GET', `/repos/${repo}/commits/${c.body.commit}/statuses`);
      const ours = st.body.filter((s: any) => s.context === 'switchyard/validation');
      expect(ours, JSON.stringify(st.body)).toHaveLength(1);
      expect(ours[0]).toMatchObject({ status: 'success' });
      expect(ours[0].description).toMatch(/^.+'s copy, validated \d{4}-\d\d-\d\d \d\d:\d\d UTC: every chart passed$/);
      expect(ours[0].target_url).toContain(v.body.task_id);
    },
    LOOP_MS,
  );
});
