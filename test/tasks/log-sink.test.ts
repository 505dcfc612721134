// The worker's task log sink: lines are stored by the time their activity's end is reported, and
// a flush returns only once every line logged before it is stored, even with a batch in flight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskStore } from '../../db/tasks/store.ts';
import { createLogger } from '../../lib/logger.ts';
import { TaskLogSink } from '../../worker/task-log-sink.ts';
import { createHarness, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  // The sink stores nothing on its own for an hour: only the flush at each activity's end does.
  h = await createHarness({ worker: true, logFlushMs: 3_600_000 });
});
afterAll(async () => h?.close());

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
const stored = async (id: string) =>
  (await h.knex('task_logs').where({ task_id: id, source: 'activity' }).orderBy('id')).map((r) => r.message as string);

describe('task log sink', () => {
  it("stores an activity's lines before its end is reported", async () => {
    const r = await admin('POST', '/api/tasks/selfcheck', { json: {} });
    expect(r.status).toBe(202);
    const task = await h.waitForTask(r.body.task_id);
    expect(task.status).toBe('SUCCEEDED');
    // The task row is finished by a later activity, so every step's lines are in the table now.
    const lines = await stored(task.id);
    for (const line of ['progress 1/3', 'progress 2/3', 'progress 3/3', 'database reachable', 'temporal reachable', 'worker polling'])
      expect(
        lines.some((l) => l.startsWith(line)),
        `${line} in ${JSON.stringify(lines)}`,
      ).toBe(true);
  });

  it('a flush waits for lines logged while an earlier flush was writing', async () => {
    const r = await admin('POST', '/api/tasks/selfcheck', { json: {} });
    const id: string = r.body.task_id;
    await h.waitForTask(id);
    const sink = new TaskLogSink(createLogger('silent'));
    sink.attach(new TaskStore(h.knex), 3_600_000);
    try {
      const meta = { workflowId: id, activityType: 'sinkTest', attempt: 1 };
      for (let i = 0; i < 3; i++) sink.info(`sink line ${i}`, meta);
      const first = sink.flush(); // writing the first three
      for (let i = 3; i < 5; i++) sink.info(`sink line ${i}`, meta);
      await sink.flush();
      expect((await stored(id)).filter((l) => l.startsWith('sink line'))).toEqual([
        'sink line 0',
        'sink line 1',
        'sink line 2',
        'sink line 3',
        'sink line 4',
      ]);
      await first;
    } finally {
      await sink.close();
    }
  });
});
