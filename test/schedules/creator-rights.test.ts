import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scheduledRunTaskId } from '../../contracts/schedules.ts';
import { buildSource, client, superset } from '../dashboard-migration/support.ts';
import { createEnvironment, createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { startRecordingProxy, type GatewayProxy } from '../support/gateway-proxy.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import type { RequestOptions } from '../support/http.ts';

/**
 * A schedule runs with the rights its creator has at run time, also when it was made with an API
 * key (which acts for its creator): a run its creator may no longer start, or whose key was
 * revoked, is a FAILED task with the reason that never started and asked Superset nothing.
 * Real PostgreSQL, Temporal (Schedules) and worker; Superset is the real 6.1.0 a, behind a
 * recording proxy (test/support/gateway-proxy.ts) that counts what each run asked of it.
 */
const real = inject('supersets') !== null;
const P = uniquePrefix('cr');
let h: Harness;
let proxy: GatewayProxy;
let env: string;
let dash: number;

const call = (m: string, p: string, o: RequestOptions = {}) => h.request(m, p, o);
const admin = (m: string, p: string, o: RequestOptions = {}) => call(m, p, { ...o, token: h.adminToken });
const setUser = async (id: string, change: Record<string, unknown>) => {
  const r = await admin('PUT', `/api/admin/users/${id}`, { json: change });
  expect(r.status, r.text).toBe(200);
};

beforeAll(async () => {
  if (!real) return;
  const sa = superset('a');
  [h, proxy] = await Promise.all([createHarness({ worker: true }), startRecordingProxy(sa.baseUrl)]);
  env = await createEnvironment(h, { baseUrl: proxy.baseUrl, username: sa.username, password: sa.password, timeoutSeconds: 60 });
  dash = (await buildSource(await client('a'), P, path.join(inject('runDir'), P), { dashboards: 1 })).dashboards[0]!.id;
  const r = await admin('POST', '/api/admin/roles', { json: { name: 'KeyMinter', permissions: ['admin:settings:WRITE'] } });
  expect(r.status, r.text).toBe(201);
}, 240_000);
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

/** A paused schedule (it runs only when triggered) backing up `dash`, made by `who`. */
async function backupSchedule(who: RequestOptions, name: string) {
  const r = await call('POST', '/api/schedules', {
    ...who,
    json: { name, kind: 'backup', params: { env_id: env, dashboard_ids: [dash] }, cron: '0 3 * * *', paused: true },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; temporal_schedule_id: string; created_by: { id: string; username: string; api_key_id: string | null } };
}

/** Triggers one run and answers its result and its task (the run's task id is known even when it never started). */
async function runOnce(schedule: { id: string; temporal_schedule_id: string }) {
  const handle = h.boot.context.temporal.schedule.getHandle(schedule.temporal_schedule_id);
  const { recentActions } = (await handle.describe()).info;
  const before = recentActions.length;
  // Runs within one second share a workflow id (Temporal names them to the second); the run id tells them apart.
  const trig = await admin('POST', `/api/schedules/${schedule.id}/trigger`);
  expect(trig.status, trig.text).toBe(202);
  const d = await waitFor(
    async () => {
      const x = await handle.describe();
      return x.info.recentActions.length > before ? x : undefined;
    },
    60_000,
    'the triggered run',
  );
  const { workflowId, firstExecutionRunId } = d.info.recentActions[before]!.action.workflow;
  const result = await h.boot.context.temporal.workflow.getHandle(workflowId, firstExecutionRunId).result();
  const taskId = scheduledRunTaskId('backup', { workflowId, runId: firstExecutionRunId });
  const task = await h.waitForTask(taskId, undefined, 60_000);
  return { result, task };
}

const exportsSince = (mark: number) => proxy.requests.slice(mark).filter((r) => r.path === '/api/v1/dashboard/export/').length;

async function expectRefused(schedule: { id: string; temporal_schedule_id: string }, reason: string) {
  const mark = proxy.mark();
  const { result, task } = await runOnce(schedule);
  expect(result).toMatchObject({ status: 'NOT_RUN' });
  expect(result.note).toContain(reason);
  expect(task.status).toBe('FAILED');
  expect(task.error.message).toContain(reason);
  expect(task.started_at).toBeNull(); // its workflow never ran
  expect(task.temporal.run_id).toBeNull();
  const logs = await admin('GET', `/api/tasks/${task.id}/logs`);
  expect(JSON.stringify(logs.body)).toContain(`not run: `);
  expect(exportsSince(mark)).toBe(0);
  return task;
}

describe.runIf(real)("a schedule runs with its creator's rights at run time", () => {
  it('made with a key: runs as the person the key acts for, stops when they lose the permission, and when the key is revoked', async () => {
    const ops = await createUserWithRoles(h, 'sched-ops', ['Operator', 'KeyMinter']);
    const key = await call('POST', '/api/admin/api-keys', {
      token: ops.token,
      json: { name: 'nightly-bot', permissions: ['schedules:WRITE', 'dashboards:BACKUP'] },
    });
    expect(key.status, key.text).toBe(201);
    const s = await backupSchedule({ apiKey: key.body.key }, 'made with a key');
    expect(s.created_by).toEqual({ id: ops.id, username: 'sched-ops', api_key_id: key.body.id });

    const ok = await runOnce(s);
    expect(ok.result).toMatchObject({ status: 'SUCCEEDED', task_id: ok.task.id });
    expect(ok.task).toMatchObject({ status: 'SUCCEEDED', owner_username: 'sched-ops', user_id: ops.id });

    // The creator is no longer an Operator: the key's dashboards:BACKUP is cut with it.
    await setUser(ops.id, { roles: ['Viewer', 'KeyMinter'] });
    await expectRefused(s, 'may no longer start backup tasks (dashboards:BACKUP)');
    await setUser(ops.id, { roles: ['Operator', 'KeyMinter'] });
    expect((await runOnce(s)).task.status).toBe('SUCCEEDED');

    expect((await admin('DELETE', `/api/admin/api-keys/${key.body.id}`)).status).toBe(200);
    await expectRefused(s, 'was made with is revoked or expired');
  }, 240_000);

  it('made by a person: fails its runs once they lost the permission, were deactivated, or were deleted', async () => {
    const op = await createUserWithRoles(h, 'sched-op', ['Operator']);
    const s = await backupSchedule({ token: op.token }, 'made by a person');
    expect(s.created_by).toEqual({ id: op.id, username: 'sched-op', api_key_id: null });
    expect((await runOnce(s)).task).toMatchObject({ status: 'SUCCEEDED', owner_username: 'sched-op' });

    await setUser(op.id, { roles: ['Viewer'] });
    const lost = await expectRefused(s, 'may no longer start backup tasks (dashboards:BACKUP)');
    expect(lost).toMatchObject({ owner_username: 'sched-op', params: { schedule_id: s.id } });
    await setUser(op.id, { roles: ['Operator'] });

    await setUser(op.id, { active: false });
    await expectRefused(s, 'is deactivated');

    expect((await admin('DELETE', `/api/admin/users/${op.id}`)).status).toBe(200);
    await expectRefused(s, 'was deleted');
    // Every refused run is a task of the schedule, so its list of runs shows why.
    const shown = await admin('GET', `/api/schedules/${s.id}`);
    const runs = (await Promise.all(shown.body.recent_runs.map((r: any) => admin('GET', `/api/tasks/${r.task_id}`)))).map(
      (r) => r.body.status,
    );
    expect(runs).toEqual(['SUCCEEDED', 'FAILED', 'FAILED', 'FAILED']);
  }, 240_000);
});
