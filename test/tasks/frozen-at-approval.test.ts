import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { listAll, type SupersetClient } from '../support/superset/fixtures.ts';
import type { SourceFixture } from '../dashboard-migration/support.ts';
import {
  buildSource,
  client,
  dashboardTitle,
  registerEnvironment,
  setIdentity,
  targetDatabase,
  userWith,
  waitTask,
} from '../git/support.ts';

/**
 * What a person approved is what is applied, against real Superset (a → b), PostgreSQL, Temporal
 * and a real worker: a gated migration and a gated git deploy into a protected b show the rules
 * and saved mappings they will apply (with their digest) while they wait; a rule of the pair
 * added after the request makes the approved task stale: refused at step `rules` with a next
 * action, and b holds nothing of it.
 */
const on = inject('supersets') !== null;
const P = `fz${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
let requester: string;
let approver: string;
let gitUuid: string;
let commit: string;

// The harness's own request-as-this-person (h is made in beforeAll, so it is read at call time).
const as = (token: string) => h.as(token);
const admin = (m: string, p: string, o: Record<string, unknown> = {}) => as(h.adminToken)(m, p, o);
const awaiting = (id: string) => h.waitForTask(id, (t) => t.status === 'AWAITING_APPROVAL', 60_000);

async function dashboardsIn(cl: SupersetClient, title: string) {
  const all = await listAll<{ id: number; dashboard_title: string }>(cl, 'dashboard', { columns: ['id', 'dashboard_title'] } as never);
  return all.filter((d) => d.dashboard_title === title);
}

/** Another person approves the waiting task; it ends refused at step `rules` as stale: answers its item. */
async function approvedButStale(taskId: string) {
  const ok = await as(approver)('POST', `/api/tasks/${taskId}/approve`, { json: {} });
  expect(ok.status, ok.text).toBe(200);
  const done = await waitTask(h, taskId);
  expect(done.status).not.toBe('SUCCEEDED');
  const item = done.result.items[0];
  expect(item).toMatchObject({ outcome: 'failed', step: 'rules' });
  expect(item.error).toContain('stale');
  return item;
}

/** Adds a rule to a → b (an Operator may, after someone else's request): answers a function that removes it. */
async function addRule(): Promise<() => Promise<void>> {
  const r = await admin('POST', `/api/environments/${envA}/rules/${envB}`, {
    json: { kind: 'text', from: 'https://bi.corp.example', to: `https://${P}.attacker.example` },
  });
  expect(r.status, r.text).toBe(201);
  return async () => {
    expect((await admin('DELETE', `/api/environments/${envA}/rules/${envB}/${r.body.id}`)).status).toBe(204);
  };
}

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 1 });
  const db = await targetDatabase(b, P, dir);
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(m.status, m.text).toBe(200);
  requester = await userWith(h, `${P}-req`, ['Operator']);
  approver = await userWith(h, `${P}-rm`, ['Operator', 'ReleaseManager']);
  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  const G = (op: string) => `/api/git/dashboards/${src.dashboards[0]!.id}/${op}`;
  const init = await admin('POST', G('init'), { json: { env_id: envA } });
  expect(init.status, init.text).toBe(200);
  gitUuid = init.body.dashboard_uuid;
  await admin('POST', G('sync'), { json: { env_id: envA } });
  commit = (await admin('POST', G('commit'), { json: { env_id: envA, message: 'As exported' } })).body.commit;
  const p = await admin('PUT', `/api/environments/${envB}`, { json: { protected: true } });
  expect(p.status, p.text).toBe(200);
}, 300_000);
afterAll(async () => h?.close());

describe.skipIf(!on)('rules and mappings frozen at approval', () => {
  it('a gated migration shows what it will apply; a rule added after the request makes it stale: refused, b unchanged', async () => {
    const r = await as(requester)('POST', '/api/dashboards/migrate', {
      json: { source_env_id: envA, target_env_id: envB, dashboard_ids: [src.dashboards[0]!.id] },
    });
    expect(r.status, r.text).toBe(202);
    const waiting = await awaiting(r.body.task_id);
    expect(waiting.approval.settings).toMatchObject({
      source_env_id: envA,
      target_env_id: envB,
      rules: [],
      db_mappings: [expect.objectContaining({ source_database_id: src.database.id })],
    });
    expect(waiting.approval.settings.digest).toMatch(/^[0-9a-f]{64}$/);
    const removeRule = await addRule();
    try {
      const item = await approvedButStale(r.body.task_id);
      expect(item.next_actions.map((x: { action: string }) => x.action)).toContain('request_again');
      expect(await dashboardsIn(b, `${P} sales 1`)).toHaveLength(0);
    } finally {
      await removeRule();
    }
  });

  it('a gated git deploy is refused alike when the rules of the pair changed after the request', async () => {
    const r = await as(requester)('POST', `/api/git/dashboards/${src.dashboards[0]!.id}/deploy`, {
      json: { env_id: envA, target_env_id: envB, commit },
    });
    expect(r.status, r.text).toBe(202);
    const waiting = await awaiting(r.body.task_id);
    expect(waiting.approval.settings).toMatchObject({ source_env_id: envA, target_env_id: envB, rules: [] });
    const removeRule = await addRule();
    try {
      const item = await approvedButStale(r.body.task_id);
      expect(item.next_actions[0].request.path).toBe(`/api/git/dashboards/${src.dashboards[0]!.id}/deploy`);
      expect(await dashboardTitle(b, gitUuid)).toBeNull();
    } finally {
      await removeRule();
    }
  });
});
