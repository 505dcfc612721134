// Workflow starts are recorded on the task rows in groups: while one update waits, the starts that
// finish meanwhile queue and one statement records them all; each row still counts its own attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskStore } from '../../db/tasks/store.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(); // no worker: the workflows stay queued in Temporal, which is all this needs
});
afterAll(async () => h?.close());

const create = async () => {
  const r = await h.request('POST', '/api/tasks/selfcheck', { token: h.adminToken, json: {} });
  expect(r.status).toBe(202);
  return r.body.task_id as string;
};
/** A bound against a hang only, far above any start on a loaded machine: the waits are for events, never timed. */
const HANG_MS = 150_000;
const row = (id: string) => h.knex('tasks').where({ id }).first('start_attempts', 'workflow_run_id');

describe('recording workflow starts', () => {
  it('records the starts that finish while an update waits in one statement', async () => {
    const first = await create();
    await waitFor(async () => !!(await row(first))?.workflow_run_id, HANG_MS, 'the first start recorded');
    const statements: string[] = [];
    const seen = (q: { sql?: string }) => {
      if (q.sql?.includes('set start_attempts =')) statements.push(q.sql);
    };
    h.knex.on('query', seen);
    const trx = await h.knex.transaction();
    try {
      // The first task's row is locked: recording its second start (an idempotent repeat, as the
      // reconciler makes) waits, and the starts of six new tasks queue behind it (fewer than the eight starts the API runs at once).
      await trx('tasks').where({ id: first }).forUpdate().first('id');
      const again = h.boot.context.tasks.startWorkflow((await h.boot.context.tasks.get(first))!);
      await waitFor(async () => statements.length === 1, HANG_MS, 'the repeat waiting on the lock');
      const ids = await Promise.all(Array.from({ length: 6 }, create));
      // Each new task's start has been answered by Temporal once its run is visible there.
      await waitFor(
        async () =>
          (
            await Promise.all(
              ids.map((id) =>
                h.boot.context.temporal.workflow
                  .getHandle(id)
                  .describe()
                  .then(
                    () => true,
                    () => false,
                  ),
              ),
            )
          ).every(Boolean),
        HANG_MS,
        'the six workflows started',
      );
      // Each answered start queues behind the waiting update (an event, not a pause): none is issued on its own.
      await waitFor(async () => h.boot.context.tasks.startsWaitingToRecord === 6, HANG_MS, 'the six starts queued behind the update');
      expect(statements).toHaveLength(1);
      await trx.commit();
      await again;
      await waitFor(async () => (await Promise.all(ids.map(row))).every((r) => r?.workflow_run_id), HANG_MS, 'the six starts recorded');
      // One more statement for all six.
      expect(statements).toHaveLength(2);
      for (const id of ids) expect(await row(id)).toMatchObject({ start_attempts: 1, workflow_run_id: expect.any(String) });
      expect(await row(first)).toMatchObject({ start_attempts: 2 });
    } finally {
      h.knex.removeListener('query', seen);
      if (!trx.isCompleted()) await trx.rollback();
    }
  }, 600_000);

  it('counts each attempt when one statement records a task twice', async () => {
    const id = await create();
    await waitFor(async () => !!(await row(id))?.workflow_run_id, HANG_MS, 'the start recorded');
    const { workflow_run_id } = await row(id);
    await new TaskStore(h.knex).recordStarts([
      { id, runId: null },
      { id, runId: 'another-run' },
    ]);
    // Two more attempts; the run id first recorded stays.
    expect(await row(id)).toMatchObject({ start_attempts: 3, workflow_run_id });
  }, 300_000);
});
