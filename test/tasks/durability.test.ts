import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { spawnWorker as spawnOsWorker } from '../support/worker-process.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(); // workers are started per test, as real processes where it matters
});
afterAll(async () => h?.close());

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });

const spawnWorker = () => spawnOsWorker(h);

describe('durability', () => {
  it('finishes a task whose worker is killed mid-step, applying no side effect twice', async () => {
    const first = spawnWorker();
    const r = await admin('POST', '/api/tasks/selfcheck', { json: { sleep_seconds: 4 } });
    const id = r.body.task_id;
    await waitFor(
      async () => (await admin('GET', `/api/tasks/${id}/logs?text=sleeping 4 s`)).body.items.length > 0,
      90_000, // a worker process starting on a loaded machine
      'sleep step to start',
    );
    // Killed once the server holds a heartbeat with progress: an event, where a 1.2 s pause only
    // hoped one had been sent (without it the next attempt starts over and says nothing of resuming).
    const handle = h.boot.context.temporal.workflow.getHandle(id);
    await waitFor(
      async () => (await handle.describe()).raw.pendingActivities?.some((a) => (a.heartbeatDetails?.payloads?.length ?? 0) > 0),
      60_000,
      'a heartbeat with progress at the server',
    );
    first.kill('SIGKILL');
    await new Promise((res) => first.once('exit', res));
    expect((await admin('GET', `/api/tasks/${id}`)).body.status).toBe('RUNNING');

    const second = spawnWorker();
    try {
      const task = await h.waitForTask(id, undefined, 60_000);
      expect(task.status).toBe('SUCCEEDED');
      expect(task.result.steps.map((s: any) => s.step)).toEqual(['database', 'temporal', 'worker', 'sleep']);
      expect(task.result.steps[3].attempt).toBeGreaterThanOrEqual(2);

      const effects = await h.knex('selfcheck_effects').where({ task_id: id });
      expect(effects.map((e) => e.step).sort()).toEqual(['database', 'sleep', 'temporal', 'worker']);
      const logs = (await admin('GET', `/api/tasks/${id}/logs?limit=1000`)).body.items;
      const messages = logs.map((i: any) => i.message);
      // The new attempt resumed from the last heartbeat instead of starting over.
      expect(messages.some((m: string) => /^resuming sleep at \d+ ms of 4000 ms \(attempt 2\)$/.test(m))).toBe(true);
      expect(messages.some((m: string) => /activity selfcheckSleep started, attempt 2/.test(m))).toBe(true);
      expect(messages.at(-1)).toBe('workflow completed');
      expect(logs.filter((i: any) => i.message.startsWith('task created by admin'))).toHaveLength(1);
    } finally {
      second.kill('SIGTERM');
      await new Promise((res) => second.once('exit', res));
    }
  }, 150_000); // two worker processes start and stop here: slow on a loaded 2-core machine

  it('starts the workflow of a row left PENDING (API died between commit and start)', async () => {
    const id = 'selfcheck-orphan-1';
    await h.knex('tasks').insert({
      id,
      type: 'selfcheck',
      status: 'PENDING',
      workflow_type: 'selfcheckWorkflow',
      workflow_input: JSON.stringify({ sleepSeconds: 0, fail: 'none', failAttempts: 1 }),
      created_at: new Date(Date.now() - 10_000),
    });
    await h.startWorker();
    try {
      const first = await h.boot.reconciler.runOnce();
      expect(first.started).toBe(1);
      const task = await h.waitForTask(id);
      expect(task.status).toBe('SUCCEEDED');
      // Running it again starts nothing new.
      expect((await h.boot.reconciler.runOnce()).started).toBe(0);
    } finally {
      await h.stopWorker();
    }
  });

  it('records the outcome of a workflow terminated from the Temporal console', async () => {
    const r = await admin('POST', '/api/tasks/selfcheck', { json: { sleep_seconds: 60 } });
    const id = r.body.task_id;
    await h.startWorker();
    try {
      await waitFor(async () => (await admin('GET', `/api/tasks/${id}`)).body.status === 'RUNNING', 20_000, 'task running');
      await h.boot.context.temporal.workflow.getHandle(id).terminate('operator pressed terminate');
      // Rows changed within TASK_RECONCILE_AFTER_SECONDS are left alone: the row is dated back instead
      // of waiting that second out (and again, should the stopped activity's last write touch it).
      await waitFor(
        async () => {
          await h
            .knex('tasks')
            .where({ id })
            .update({ updated_at: h.knex.raw("now() - interval '1 minute'") });
          return (await h.boot.reconciler.runOnce()).synced > 0;
        },
        30_000,
        'the terminated run reconciled',
      );
      const task = (await admin('GET', `/api/tasks/${id}`)).body;
      expect(task.status).toBe('FAILED');
      expect(task.error.message).toBe('workflow was terminated in Temporal');
      const logs = (await admin('GET', `/api/tasks/${id}/logs?level=ERROR`)).body.items.map((i: any) => i.message);
      expect(logs.some((m: string) => m.startsWith('workflow terminated: operator pressed terminate'))).toBe(true);
    } finally {
      await h.stopWorker();
    }
  });

  it('refuses a workflow started around the API: it fails at once, does nothing and says why', async () => {
    const id = `selfcheck-${randomUUID()}`;
    await h.startWorker();
    try {
      // What anyone who reaches the Temporal frontend could do: start a task workflow directly.
      const handle = await h.boot.context.temporal.workflow.start('selfcheckWorkflow', {
        workflowId: id,
        taskQueue: h.config.TEMPORAL_TASK_QUEUE,
        args: [{ sleepSeconds: 0, fail: 'none', failAttempts: 1 }],
      });
      const err = await handle.result().then(
        () => undefined,
        (e: unknown) => e as { cause?: { type?: string; message?: string } },
      );
      expect(err?.cause?.type).toBe('TaskNotRegistered');
      expect(err?.cause?.message).toMatch(/started through the Switchyard API/);
      // No row was made up for it, and no step ran (the selfcheck's side-effect table is empty).
      expect(await h.knex('tasks').where({ id })).toHaveLength(0);
      expect(await h.knex('selfcheck_effects').where({ task_id: id })).toHaveLength(0);
    } finally {
      await h.stopWorker();
    }
  });

  it("shows each task's summary in the Temporal console", async () => {
    const r = await admin('POST', '/api/tasks/selfcheck', { json: { sleep_seconds: 0 } });
    await h.startWorker();
    try {
      await h.waitForTask(r.body.task_id);
      const described = await h.boot.context.temporal.workflow.getHandle(r.body.task_id).describe();
      expect(await described.staticSummary()).toBe('Selfcheck: database, Temporal and worker');
      expect((await admin('GET', `/api/tasks/${r.body.task_id}`)).body.summary).toBe('Selfcheck: database, Temporal and worker');
    } finally {
      await h.stopWorker();
    }
  });

  it('cancels a task that never reached Temporal without starting it later', async () => {
    const id = 'selfcheck-orphan-2';
    await h.knex('tasks').insert({
      id,
      type: 'selfcheck',
      status: 'PENDING',
      owner_id: (await h.knex('users').where({ username: 'admin' }).first()).id,
      workflow_type: 'selfcheckWorkflow',
      workflow_input: JSON.stringify({ sleepSeconds: 0, fail: 'none', failAttempts: 1 }),
      created_at: new Date(Date.now() - 10_000),
    });
    const c = await admin('POST', `/api/tasks/${id}/cancel`);
    expect(c.status).toBe(202);
    expect(c.body.status).toBe('CANCELLED');
    expect((await h.boot.reconciler.runOnce()).started).toBe(0);
    await expect(h.boot.context.temporal.workflow.getHandle(id).describe()).rejects.toThrow();
  });
});
