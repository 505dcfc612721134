import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';
import { createSqliteDatabase, getDashboard, updateDashboard, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from '../dashboard-migration/support.ts';

/**
 * Schedules against the real Temporal server and real Superset a → b: a backup every 5 seconds
 * produces ordinary tasks and backups, pause stops them, trigger runs one at once, and a drift
 * report names the dashboard changed in the target.
 */
const enabled = inject('supersets') !== null;
const P = `s${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

async function tasksOf(scheduleId: string, type: string) {
  const r = await admin('GET', `/api/tasks?task_type=${type}&page_size=100`);
  expect(r.status, r.text).toBe(200);
  return (r.body.items as any[]).filter((t) => t.params?.schedule_id === scheduleId);
}

const handleOf = (temporalScheduleId: string) => h.boot.context.temporal.schedule.getHandle(temporalScheduleId);

/**
 * Waits until two of the 5 s ticks the paused schedule would have fired on have passed, told by
 * an event rather than a pause: a control schedule on the same interval (Temporal aligns
 * intervals to the epoch, so both tick together) has taken two actions. Its workflows start on a
 * queue no worker polls and time out on their own.
 */
async function twoTicksPassed(): Promise<void> {
  const control = await h.boot.context.temporal.schedule.create({
    scheduleId: `${P}-control`,
    spec: { intervals: [{ every: '5s' }] },
    action: { type: 'startWorkflow', workflowType: 'controlTick', taskQueue: `${P}-no-worker`, args: [], workflowExecutionTimeout: '10s' },
  });
  try {
    await waitFor(async () => (await control.describe()).info.numActionsTaken >= 2, 120_000, 'two ticks of the control schedule');
  } finally {
    await control.delete();
  }
}

beforeAll(async () => {
  h = await createHarness({ worker: true });
  if (!enabled) return;
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const targetDb = await createSqliteDatabase(b, { name: `${P}_warehouse`, path: path.join(dir, `${P}-b.db`), tables: prefixedTables(P) });
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
  });
  expect(m.status, m.text).toBe(200);
}, 240_000);
afterAll(async () => h?.close());

describe('schedules: validation and permissions', () => {
  it('refuses bad input with a problem body and creates nothing', async () => {
    const env = enabled ? envA : '00000000-0000-4000-8000-000000000000';
    for (const body of [
      { name: 'x', kind: 'backup', params: { env_id: env } }, // no timing
      { name: 'x', kind: 'backup', params: { env_id: env }, interval_seconds: 10, cron: '* * * * *' },
      { name: 'x', kind: 'backup', params: { env_id: env }, interval_seconds: 1 },
      { name: 'x', kind: 'nightly', params: {}, interval_seconds: 60 },
      { name: 'x', kind: 'drift_report', params: { source_env_id: env, target_env_id: env }, interval_seconds: 60 },
      { name: 'x', kind: 'backup', params: { env_id: env }, cron: 'every day' },
    ]) {
      const r = await admin('POST', '/api/schedules', { json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
    }
    const unknownEnv = await admin('POST', '/api/schedules', {
      json: { name: 'x', kind: 'backup', params: { env_id: '00000000-0000-4000-8000-000000000000' }, interval_seconds: 60 },
    });
    expect(unknownEnv.status).toBe(404);
    if (enabled) {
      // Five fields, but no minute 61: Temporal's refusal is a 400, and no row is left behind.
      const r = await admin('POST', '/api/schedules', { json: { name: 'x', kind: 'backup', params: { env_id: env }, cron: '61 * * * *' } });
      expect(r.status, r.text).toBe(400);
      expect(r.body.detail).toContain('Temporal refused the schedule');
    }
    expect((await admin('GET', '/api/schedules')).body.total).toBe(0);
    expect((await admin('POST', '/api/schedules/00000000-0000-4000-8000-000000000000/trigger')).status).toBe(404);
  });

  it('needs schedules:READ to list and schedules:WRITE to change', async () => {
    const viewer = await h.request('POST', '/api/admin/users', {
      token: h.adminToken,
      json: { username: `${P}viewer`, password: `${P}viewer-password-123`, roles: ['Viewer'] },
    });
    expect(viewer.status, viewer.text).toBe(201);
    const token = await h.login(`${P}viewer`, `${P}viewer-password-123`);
    expect((await h.request('GET', '/api/schedules', { token })).status).toBe(200);
    const r = await h.request('POST', '/api/schedules', {
      token,
      json: { name: 'x', kind: 'backup', params: { env_id: '00000000-0000-4000-8000-000000000000' }, interval_seconds: 60 },
    });
    expect(r.status).toBe(403);
  });
});

describe.runIf(enabled)('schedules against real Temporal and Superset', () => {
  it('a backup every 5 s produces tasks and backups; pause stops them; trigger runs one', async () => {
    const dash = src.dashboards[0]!.id;
    const created = await admin('POST', '/api/schedules', {
      json: { name: `${P} backups`, kind: 'backup', params: { env_id: envA, dashboard_ids: [dash] }, interval_seconds: 5 },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect(created.body.spec).toEqual({ interval_seconds: 5, overlap: 'skip', catchup_window_seconds: 300 });
    expect(created.body.temporal_schedule_id).toBe(`switchyard-schedule-${id}`);
    expect((await h.boot.context.temporal.schedule.getHandle(created.body.temporal_schedule_id).describe()).state.paused).toBe(false);

    // Two runs, each an ordinary task that succeeded with its backup.
    const done = await waitFor(
      async () => {
        const ts = (await tasksOf(id, 'backup')).filter((t) => t.status === 'SUCCEEDED');
        return ts.length >= 2 ? ts : undefined;
      },
      90_000,
      'two scheduled backups',
    );
    for (const t of done) {
      expect(t.owner_username).toBe('admin');
      const full = await waitTask(h, t.id);
      expect(full.result.items[0]).toMatchObject({ id: dash, status: 'succeeded' });
    }
    const backups = await admin('GET', `/api/dashboards/${dash}/backups?env_id=${envA}`);
    expect(backups.body.total).toBeGreaterThanOrEqual(2);
    const shown = await admin('GET', `/api/schedules/${id}`);
    expect(shown.body.next_runs.length).toBeGreaterThan(0);
    expect(shown.body.recent_runs.map((r: any) => r.task_id)).toEqual(expect.arrayContaining([done[0].id]));

    // Pause with a note: no new task once the run in flight (if any) has registered.
    const paused = await admin('POST', `/api/schedules/${id}/pause`, { json: { note: 'maintenance window' } });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, note: 'maintenance window' });
    const described = await h.boot.context.temporal.schedule.getHandle(created.body.temporal_schedule_id).describe();
    expect(described.state).toMatchObject({ paused: true, note: 'maintenance window' });
    // A run already in flight when the pause came still registers its task: count once none is running.
    await waitFor(
      async () => ((await handleOf(created.body.temporal_schedule_id).describe()).info.runningActions.length === 0 ? true : undefined),
      60_000,
      'no run in flight',
    );
    const before = (await tasksOf(id, 'backup')).length;
    const actionsBefore = (await handleOf(created.body.temporal_schedule_id).describe()).info.numActionsTaken;
    await twoTicksPassed();
    expect((await handleOf(created.body.temporal_schedule_id).describe()).info.numActionsTaken).toBe(actionsBefore);
    expect((await tasksOf(id, 'backup')).length).toBe(before);

    // Trigger runs one now, paused as it is.
    const trig = await admin('POST', `/api/schedules/${id}/trigger`);
    expect(trig.status, trig.text).toBe(202);
    const triggered = await waitFor(
      async () => {
        const ts = await tasksOf(id, 'backup');
        return ts.length === before + 1 ? ts : undefined;
      },
      60_000,
      'the triggered run',
    );
    expect((await waitTask(h, triggered[0].id)).status).toBe('SUCCEEDED');

    const resumed = await admin('POST', `/api/schedules/${id}/resume`);
    expect(resumed.body).toMatchObject({ paused: false, note: null });
    expect((await admin('DELETE', `/api/schedules/${id}`)).status).toBe(204);
    expect((await admin('GET', `/api/schedules/${id}`)).status).toBe(404);
  }, 240_000);

  it('a drift report between a and b lists the dashboard changed in b, and the one left alone as in sync', async () => {
    const [changed, same] = src.dashboards;
    const mig = await admin('POST', '/api/dashboards/migrate', {
      json: { source_env_id: envA, target_env_id: envB, dashboard_ids: [changed!.id, same!.id], overwrite: true },
    });
    expect(mig.status, mig.text).toBe(202);
    expect((await waitTask(h, mig.body.task_id)).status).toBe('SUCCEEDED');
    const inB = (await getDashboard(b, changed!.slug!)).result as { id: number };
    await updateDashboard(b, inB.id, { dashboard_title: `${changed!.title} edited in b` });

    const s = await admin('POST', '/api/schedules', {
      json: {
        name: `${P} drift`,
        kind: 'drift_report',
        params: { source_env_id: envA, target_env_id: envB },
        cron: '0 3 * * *',
        paused: true,
        note: 'on demand',
      },
    });
    expect(s.status, s.text).toBe(201);
    expect((await admin('POST', `/api/schedules/${s.body.id}/trigger`)).status).toBe(202);
    const [task] = await waitFor(
      async () => {
        const ts = await tasksOf(s.body.id, 'drift_report');
        return ts.length ? ts : undefined;
      },
      60_000,
      'the drift report task',
    );
    const report = await waitTask(h, task.id, 180_000);
    // The whole task in the message: a report that ended without items says why (its error, its step).
    expect(report.result?.items, JSON.stringify(report)).toBeInstanceOf(Array);
    const items = report.result.items as any[];
    const drifted = items.find((i) => i.id === changed!.id);
    expect(drifted, JSON.stringify(items)).toMatchObject({ status: 'drifted', outcome: 'succeeded' });
    expect(JSON.stringify(drifted.differences)).toContain('edited in b');
    expect(items.find((i) => i.id === same!.id)).toMatchObject({ status: 'in_sync', differences: [] });
    expect(report.result.next_actions[0].request.body.dashboard_ids).toContain(changed!.id);
    // Nothing was written: the target keeps its own title.
    expect((await getDashboard(b, inB.id)).result.dashboard_title).toBe(`${changed!.title} edited in b`);
  }, 300_000);

  it('two runs within one second, which Temporal gives one workflow id, are two tasks, each with its own outcome', async () => {
    const created = await admin('POST', '/api/schedules', {
      json: {
        name: `${P} same second`,
        kind: 'backup',
        params: { env_id: envA, dashboard_ids: [src.dashboards[0]!.id] },
        cron: '0 4 * * *',
        paused: true,
      },
    });
    expect(created.status, created.text).toBe(201);
    // What Temporal does for two triggers in one second: the action's workflow id and the time to
    // the second, so the same id, started again once the first run has closed. Started here by
    // hand, so the test does not depend on two requests landing in one second.
    const run = () =>
      h.boot.context.temporal.workflow.execute('scheduledRunWorkflow', {
        workflowId: `scheduled-${created.body.id}-2031-03-01T04:00:00Z`,
        taskQueue: h.config.TEMPORAL_TASK_QUEUE,
        args: [{ scheduleId: created.body.id }],
      }) as Promise<{ task_id: string | null; status: string }>;
    const first = await run();
    const second = await run();
    expect(first).toMatchObject({ status: 'SUCCEEDED', task_id: expect.stringMatching(/^backup-scheduled-/) });
    expect(second).toMatchObject({ status: 'SUCCEEDED', task_id: expect.stringMatching(/^backup-scheduled-/) });
    expect(second.task_id).not.toBe(first.task_id);
    const runs = await tasksOf(created.body.id, 'backup');
    expect(runs.map((t) => t.id).sort()).toEqual([first.task_id, second.task_id].sort());
    expect(runs.every((t) => t.status === 'SUCCEEDED')).toBe(true);
    expect((await admin('DELETE', `/api/schedules/${created.body.id}`)).status).toBe(204);
  }, 180_000);

  it("runs with its creator's rights as they are now: an Operator's schedule stops running once they are a Viewer", async () => {
    const op = await createUserWithRoles(h, `${P}op`, ['Operator']);
    const created = await h.request('POST', '/api/schedules', {
      token: op.token,
      json: {
        name: `${P} operator's`,
        kind: 'backup',
        params: { env_id: envA, dashboard_ids: [src.dashboards[0]!.id] },
        cron: '0 4 * * *',
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.created_by.username).toBe(`${P}op`);
    const handle = h.boot.context.temporal.schedule.getHandle(created.body.temporal_schedule_id);
    const runResult = async (n: number) => {
      const d = await waitFor(
        async () => {
          const x = await handle.describe();
          return x.info.recentActions.length >= n ? x : undefined;
        },
        60_000,
        `run ${n}`,
      );
      // By run id too: runs within one second share Temporal's workflow id.
      const wf = d.info.recentActions[n - 1]!.action.workflow;
      return h.boot.context.temporal.workflow.getHandle(wf.workflowId, wf.firstExecutionRunId).result();
    };

    expect((await admin('POST', `/api/schedules/${created.body.id}/trigger`)).status).toBe(202);
    const first = await runResult(1);
    expect(first).toMatchObject({ status: 'SUCCEEDED', task_id: expect.stringMatching(/^backup-scheduled-/) });
    expect((await waitTask(h, first.task_id)).owner_username).toBe(`${P}op`);

    const demote = await admin('PUT', `/api/admin/users/${op.id}`, { json: { roles: ['Viewer'] } });
    expect(demote.status, demote.text).toBe(200);
    expect((await admin('POST', `/api/schedules/${created.body.id}/trigger`)).status).toBe(202);
    const second = await runResult(2);
    expect(second).toMatchObject({ status: 'NOT_RUN', task_id: null });
    expect(second.note).toContain('may no longer start backup tasks');
    // The refused run is a FAILED task with the reason, whose workflow never started.
    const runs = await tasksOf(created.body.id, 'backup');
    expect(runs).toHaveLength(2);
    const refused = runs.find((t) => t.id !== first.task_id);
    expect(refused).toMatchObject({ status: 'FAILED', started_at: null, owner_username: `${P}op` });
    expect(refused.error.message).toContain('may no longer start backup tasks (dashboards:BACKUP)');
  }, 180_000);
});
