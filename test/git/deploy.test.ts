import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decideApprovalUpdate } from '../../contracts/workflow-messages.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import type { SupersetClient } from '../support/superset/fixtures.ts';
import type { SourceFixture } from '../dashboard-migration/support.ts';
import {
  buildSource,
  client,
  dashboardTitle,
  registerEnvironment,
  renameDashboard,
  setIdentity,
  targetDatabase,
  userWith,
  waitTask,
} from './support.ts';

// Deploy of a pinned commit from a dashboard's repository into a second real Superset (a → b),
// through the API and a real worker on PostgreSQL and Temporal; approval into a protected
// environment: approve, reject, self-approval refused, and a window that runs out.
const on = inject('supersets') !== null;
const P = `d${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
let dash: number;
let uuid: string;
let commit1: string;
let commit2: string;
let operator: string;
let approver: string;
let viewer: string;

// The harness's own request-as-this-person (h is made in beforeAll, so it is read at call time).
const as = (token: string) => h.as(token);
const G = (op: string) => `/api/git/dashboards/${dash}/${op}`;

async function waitStatus(taskId: string, status: string) {
  return h.waitForTask(taskId, (t) => t.status === status, 60_000);
}

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
  const admin = as(h.adminToken);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(m.status, m.text).toBe(200);
  operator = await userWith(h, `${P}-op`, ['Operator']);
  approver = await userWith(h, `${P}-rm`, ['ReleaseManager']);
  viewer = await userWith(h, `${P}-v`, ['Viewer']);

  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  const init = await admin('POST', G('init'), { json: { env_id: envA } });
  expect(init.status, init.text).toBe(200);
  uuid = init.body.dashboard_uuid;
  await admin('POST', G('sync'), { json: { env_id: envA } });
  commit1 = (await admin('POST', G('commit'), { json: { env_id: envA, message: 'As first exported' } })).body.commit;
  await renameDashboard(a, dash, `${P} renamed`);
  await admin('POST', G('sync'), { json: { env_id: envA } });
  commit2 = (await admin('POST', G('commit'), { json: { env_id: envA, message: 'Renamed' } })).body.commit;
  expect(commit1).not.toBe(commit2);
}, 300_000);
afterAll(async () => h?.close());

describe.skipIf(!on)('deploy of a pinned commit', () => {
  it('imports the dashboard as it was at the commit into another environment and records it', async () => {
    const r = await as(h.adminToken)('POST', G('deploy'), { json: { env_id: envA, target_env_id: envB, commit: commit1.slice(0, 12) } });
    expect(r.status, r.text).toBe(202);
    const task = await waitTask(h, r.body.task_id);
    expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
    expect(task.type).toBe('git_deploy');
    expect(task.params.commit).toBe(commit1);
    const item = task.result.items[0];
    expect(item).toMatchObject({ kind: 'repository', status: 'deployed', outcome: 'succeeded', commit: commit1, target_env_id: envB });
    expect(item.verification.ok).toBe(true);
    expect(await dashboardTitle(b, uuid)).toBe(`${P} sales 1`); // the commit's title, not Superset a's current one
    const s = await as(h.adminToken)('GET', `${G('status')}?env_id=${envA}`);
    expect(s.body.last_deployed).toMatchObject({
      env_id: envB,
      commit: commit1,
      task_id: r.body.task_id,
      target_dashboard_id: item.target_dashboard_id,
    });
    expect(
      (await as(h.adminToken)('POST', G('deploy'), { json: { env_id: envA, target_env_id: envB, commit: 'f'.repeat(40) } })).status,
    ).toBe(404);
  });

  it('into a protected environment it waits; the requester cannot approve; another person approves and it goes live', async () => {
    const p = await as(h.adminToken)('PUT', `/api/environments/${envB}`, { json: { protected: true } });
    expect(p.status, p.text).toBe(200);
    expect(p.body.protected).toBe(true);
    const r = await as(operator)('POST', G('deploy'), { json: { env_id: envA, target_env_id: envB, commit: commit2 } });
    expect(r.status, r.text).toBe(202);
    const waiting = await waitStatus(r.body.task_id, 'AWAITING_APPROVAL');
    expect(waiting.status).toBe('AWAITING_APPROVAL');
    expect(await dashboardTitle(b, uuid)).toBe(`${P} sales 1`);

    const self = await as(operator)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: {} });
    expect(self.status, self.text).toBe(403);
    const viewerTry = await as(viewer)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: {} });
    expect(viewerTry.status).toBe(403);
    expect(viewerTry.body.detail).toContain('tasks:APPROVE');

    const ok = await as(approver)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: { comment: 'looks right' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ task_id: r.body.task_id, decision: 'approve', status: 'RUNNING' });
    const again = await as(h.adminToken)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: {} });
    expect(again.status).toBe(409);

    const task = await waitTask(h, r.body.task_id);
    expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
    expect(task.result.approval).toMatchObject({ required: true, decision: 'approve', by: `${P}-rm`, comment: 'looks right' });
    expect(await dashboardTitle(b, uuid)).toBe(`${P} renamed`);
    const s = await as(h.adminToken)('GET', `${G('status')}?env_id=${envA}`);
    expect(s.body.last_deployed).toMatchObject({ env_id: envB, commit: commit2, approved_by: `${P}-rm` });
  });

  it('approvals compare people: nobody approves with their API key what they asked for with a password, nor the other way round', async () => {
    const minter = await as(h.adminToken)('POST', '/api/admin/roles', {
      json: { name: `${P}-minter`, permissions: ['admin:settings:WRITE'] },
    });
    expect(minter.status, minter.text).toBe(201);
    const person = await userWith(h, `${P}-rm-ci`, ['ReleaseManager', `${P}-minter`]);
    const personId = (await as(person)('GET', '/api/auth/me')).body.id as string;
    const key = await as(person)('POST', '/api/admin/api-keys', {
      json: { name: `${P}-deploy-bot`, permissions: ['git:WRITE', 'tasks:APPROVE', 'tasks:READ'] },
    });
    expect(key.status, key.text).toBe(201);
    const withKey = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, apiKey: key.body.key });

    // Asked for with a password; the same person's key may not approve it.
    const byPassword = await as(person)('POST', G('deploy'), { json: { env_id: envA, target_env_id: envB, commit: commit1 } });
    expect(byPassword.status, byPassword.text).toBe(202);
    await waitStatus(byPassword.body.task_id, 'AWAITING_APPROVAL');
    const keyApproves = await withKey('POST', `/api/tasks/${byPassword.body.task_id}/approve`, { json: {} });
    expect(keyApproves.status, keyApproves.text).toBe(403);
    expect(keyApproves.body.code).toBe('self_approval');

    // Asked for with the key: the task is the person's, whose password may not approve it, and
    // the workflow's own check refuses that person's decision sent to it directly.
    const byKey = await withKey('POST', G('deploy'), { json: { env_id: envA, target_env_id: envB, commit: commit1 } });
    expect(byKey.status, byKey.text).toBe(202);
    const waiting = await waitStatus(byKey.body.task_id, 'AWAITING_APPROVAL');
    expect(waiting).toMatchObject({ user_id: personId, owner_username: `${P}-rm-ci` });
    const personApproves = await as(person)('POST', `/api/tasks/${byKey.body.task_id}/approve`, { json: {} });
    expect(personApproves.status, personApproves.text).toBe(403);
    expect(personApproves.body.code).toBe('self_approval');
    await expect(
      h.boot.context.temporal.workflow
        .getHandle(byKey.body.task_id)
        .executeUpdate(decideApprovalUpdate, { args: [{ decision: 'approve', userId: personId, username: `${P}-rm-ci` }] }),
    ).rejects.toMatchObject({ cause: { type: 'SelfApproval' } });

    // Another person decides on both; nothing of this reaches b.
    for (const t of [byPassword.body.task_id, byKey.body.task_id]) {
      const no = await as(approver)('POST', `/api/tasks/${t}/reject`, { json: { comment: 'not now' } });
      expect(no.status, no.text).toBe(200);
      expect((await waitTask(h, t)).status).toBe('CANCELLED');
    }
    expect(await dashboardTitle(b, uuid)).toBe(`${P} renamed`);
  });

  it('a rejection ends the task CANCELLED with the reason; nothing is deployed', async () => {
    const r = await as(operator)('POST', G('deploy'), { json: { env_id: envA, target_env_id: envB, commit: commit1 } });
    await waitStatus(r.body.task_id, 'AWAITING_APPROVAL');
    const no = await as(approver)('POST', `/api/tasks/${r.body.task_id}/reject`, { json: { comment: 'not this one' } });
    expect(no.status, no.text).toBe(200);
    expect(no.body).toMatchObject({ decision: 'reject', status: 'CANCELLED' });
    const task = await waitTask(h, r.body.task_id);
    expect(task.status).toBe('CANCELLED');
    expect(task.error.message).toContain(`rejected by ${P}-rm: not this one`);
    expect(await dashboardTitle(b, uuid)).toBe(`${P} renamed`);
  });

  it('an approval window that runs out ends the task CANCELLED with the reason', async () => {
    const r = await as(operator)('POST', G('deploy'), {
      json: { env_id: envA, target_env_id: envB, commit: commit1, approval_timeout_seconds: 2 },
    });
    const task = await waitTask(h, r.body.task_id);
    expect(task.status).toBe('CANCELLED');
    expect(task.error.message).toContain('approval window ran out');
    expect(task.result.approval.decision).toBe('timeout');
    const late = await as(approver)('POST', `/api/tasks/${r.body.task_id}/approve`, { json: {} });
    expect(late.status).toBe(409);
    expect(await dashboardTitle(b, uuid)).toBe(`${P} renamed`);
  });
});
