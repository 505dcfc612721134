import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/harness.ts';
import { listDashboards } from '../support/superset/fixtures.ts';
import { workflowRuns } from '../support/workflow-runs.ts';
import { realPairAvailable, seedForMigration, startRealPair, type RealPair } from './real-pair.ts';

/**
 * A migration of more dashboards than one workflow run handles (TASK_ITEMS_PER_RUN=3 here) runs as
 * a chain of runs under one task id, between the real Superset 6.1.0 a → b behind recording
 * proxies (test/support/gateway-proxy.ts): every dashboard is in the result exactly once and
 * imported once, the runs carry no outcomes, and a cancel in a later run keeps what was done and
 * leaves the rest untouched (the later run's import held at the proxy until the cancel is sent).
 */
let pair: RealPair;
const IMPORT = '/api/v1/dashboard/import/';

beforeAll(async () => {
  pair = await startRealPair({ TASK_ITEMS_PER_RUN: '3' });
}, 180_000);
afterAll(async () => pair?.close());

/** The titles b holds among these (each seed's titles share its unique prefix). */
async function titlesInTarget(titles: string[]): Promise<string[]> {
  const prefix = titles[0]!.split(' ')[0]!;
  const r = await listDashboards(pair.b, { filters: [{ col: 'dashboard_title', opr: 'title_or_slug', value: prefix }], pageSize: 100 });
  return r.result.map((d) => d.dashboard_title).filter((t) => titles.includes(t));
}

async function startMigration(ids: number[], mapping: Array<{ source_database_id: number; target_database_id: number }>) {
  const r = await pair.admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: ids, db_mappings: mapping },
  });
  expect(r.status, r.text).toBe(202);
  return r.body.task_id as string;
}

describe.runIf(realPairAvailable())('a migration larger than one workflow run: a (6.1.0) → b (6.1.0)', () => {
  it('continues as new under the same task and ends SUCCEEDED with every dashboard once, in request order', async () => {
    const { ids, titles, mapping } = await seedForMigration(pair, 'Chain', 20);
    const mark = pair.target.mark();
    const id = await startMigration([...ids].reverse(), mapping);
    const task = await pair.h.waitForTask(id, undefined, 480_000);
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.progress).toMatchObject({ done: 20, total: 20 });
    expect(task.result.items.map((i: any) => i.id)).toEqual([...ids].reverse());
    for (const item of task.result.items) {
      expect(item).toMatchObject({ kind: 'dashboard', status: 'imported', outcome: 'succeeded' });
      expect(item.verification).toMatchObject({ ok: true, charts_linked: 2 });
    }
    expect(task.result.totals).toMatchObject({ requested: 20, processed: 20, imported: 20, failed: 0, not_started: 0 });
    expect(task.result.timings.migration_ms).toBeGreaterThan(0);
    // Each dashboard imported once, however many runs the task took: one joint import a batch (16, then 4) that
    // Superset accepted, and b holds each. A call it refused (a key taught, an outage) imported nothing; the
    // message lists every import's answer and any attempt Temporal retried, for a failure to explain itself.
    const runs = await workflowRuns(pair.h.boot.context.temporal, id);
    const imports = pair.target.requests.slice(mark).filter((r) => r.path === IMPORT);
    const seen = JSON.stringify({ imports: imports.map((r) => r.status), retried: runs.flatMap((r) => r.retried) });
    expect(imports.filter((r) => r.status !== undefined && r.status < 300).length, seen).toBe(2);
    expect((await titlesInTarget(titles)).sort()).toEqual([...titles].sort());

    // Batches of 16 with three per run: the first run ends after 16 and continues as new, the second
    // takes the last 4; the workflow's own result (what Temporal keeps) has the totals and no outcomes.
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.slice(0, -1).every((r) => r.closedBy === 'WORKFLOW_EXECUTION_CONTINUED_AS_NEW')).toBe(true);
    expect(runs.at(-1)!.closedBy).toBe('WORKFLOW_EXECUTION_COMPLETED');
    // The first run does not wait for its last batch's verification: the second run verifies it beside its own batch.
    const verifications = runs.map((r) => r.activities.filter((a) => a === 'verifyMigratedBatch').length);
    expect(verifications[0]).toBe(0);
    expect(verifications[1]).toBe(2);
    const own = await pair.h.boot.context.temporal.workflow.getHandle(id).result();
    expect(own).toMatchObject({ status: 'SUCCEEDED', totals: { imported: 20 } });
    expect(JSON.stringify(own)).not.toContain('"items"');
  }, 600_000);

  it('a cancel in a later run ends CANCELLED with the done dashboards listed and the rest untouched', async () => {
    // 16 in each run (three per run): the second run's import is held until the cancel is sent, so the cancel lands in
    // that run, before the last of 40. No timer releases it: a task that never reached a second run never ends.
    const { ids, titles, mapping } = await seedForMigration(pair, 'Chaincancel', 40);
    const mark = pair.target.mark();
    const cancelSent = Promise.withResolvers<void>();
    pair.target.hold({ method: 'POST', path: IMPORT, when: () => pair.target.count(IMPORT, mark) === 2 }, cancelSent.promise);
    try {
      const id = await startMigration(ids, mapping);
      await waitFor(async () => pair.target.count(IMPORT, mark) >= 2 || undefined, 480_000, "the second run's import");
      const runs = await workflowRuns(pair.h.boot.context.temporal, id);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect((await pair.admin('POST', `/api/tasks/${id}/cancel`)).status).toBe(202);
      cancelSent.resolve();
      const task = await pair.h.waitForTask(id, undefined, 300_000);
      expect(task.status).toBe('CANCELLED');
      const done = task.result.items.length;
      expect(done).toBeGreaterThanOrEqual(16);
      expect(done).toBeLessThan(40);
      expect(task.result).toMatchObject({ cancelled: true, not_started: 40 - done, totals: { requested: 40, processed: done } });
      // Every dashboard is fully in the target or not there at all.
      const there = new Set(await titlesInTarget(titles));
      const doneIds = new Set(task.result.items.map((i: any) => i.id));
      for (const [i, d] of ids.entries()) expect(there.has(titles[i]!), `dashboard ${d}`).toBe(doneIds.has(d));
      const after = await workflowRuns(pair.h.boot.context.temporal, id);
      expect(after.at(-1)!.closedBy).toBe('WORKFLOW_EXECUTION_CANCELED');
    } finally {
      cancelSent.resolve();
      pair.target.clearHolds();
    }
  }, 900_000);
});
