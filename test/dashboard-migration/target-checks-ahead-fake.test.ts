import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSeeded, startFakePair, type FakePair } from './fake-pair.ts';

/**
 * The target's side of a batch's verification begins inside the batch, right after its imports,
 * beside the source's checks (activities/dashboard-migration/target-checks-ahead.ts); the
 * verification takes the checks that passed and makes again those that did not. Counted at two
 * fake Supersets.
 *
 * Why the fake: it holds the source's chart queries until the target answers one (the ordering
 * proven without a timer) and fails a target check on demand, which a real Superset does not.
 */
let pair: FakePair;

const CHART_DATA = '/api/v1/chart/data';
const dashboardCharts = /^\/api\/v1\/dashboard\/\d+\/charts$/;

describe("a batch checks the target's charts as soon as it has imported them", () => {
  beforeAll(async () => {
    pair = await startFakePair();
  }, 120_000);
  afterAll(async () => pair?.close());

  it("queries the target while the source's checks still run, and the verification does not query it again", async () => {
    const { source, target } = pair;
    const marks = [source.mark(), target.mark()] as const;
    // The source's chart queries (made beside the imports; the batch waits for them) are held until
    // the target answers one: only a target check made inside the batch asks one then, since the
    // verification starts after the batch returns. No timer releases them: without the checks inside the batch the task
    // never ends, and the test's own timeout fails it.
    source.hold({ method: 'POST', path: CHART_DATA }, target.seen({ method: 'POST', path: CHART_DATA }));
    try {
      const task = await migrateSeeded(pair, 'Ahead target', 3);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.items).toHaveLength(3);
      for (const item of task.result.items) expect(item.verification).toMatchObject({ ok: true, charts_linked: 2 });
    } finally {
      source.clearFailures();
    }
    // One target chart-data call for the batch (its dashboards' charts on one dataset go together), none again; each
    // dashboard's charts from the companions' views of the target (its export and one chart list read), no per-dashboard
    // chart list (one each while the fake could not answer a dashboard's related roles, so every companion view was read again).
    expect(target.count(CHART_DATA, marks[1])).toBe(1);
    expect(target.count(dashboardCharts, marks[1])).toBe(0);
    // Each chart's uuid, viz type and saved query context from one export of the batch's imported dashboards (after its
    // writes), the uuids from the chart list the companions' views read after the import: no chart detail read (one per
    // chart before), and one chart list by ids for the batch (a second one for the uuids before). The verification records
    // that export as the target's state: one export a batch, none of its own.
    expect(target.count(/^\/api\/v1\/chart\/\d+$/, marks[1])).toBe(0);
    expect(target.count('/api/v1/dashboard/export/', marks[1])).toBe(1);
    const chartListsByIds = target.requests
      .slice(marks[1])
      .filter((r) => r.method === 'GET' && r.path === '/api/v1/chart/' && /"col":"id","opr":"in"/.test(JSON.stringify(r.q ?? {})));
    expect(chartListsByIds).toHaveLength(1);
    // The new dashboards' ids were read with the columns those views compare (owners, roles, tags, certification): the
    // views list no dashboard by ids of their own (one more list read a batch before).
    const dashboardListsByIds = target.requests
      .slice(marks[1])
      .filter((r) => r.method === 'GET' && r.path === '/api/v1/dashboard/' && /"col":"id","opr":"in"/.test(JSON.stringify(r.q ?? {})));
    expect(dashboardListsByIds).toHaveLength(0);
  }, 240_000);

  it('makes again a target check that did not pass inside the batch, and reports what it gets then', async () => {
    const { target } = pair;
    const mark = target.mark();
    // Every target chart query made inside the batch fails (Superset's 500): the joint one, then each chart's alone. Asked again by
    // the verification, it passes: the dashboard is verified on what the verification got, not on the refusal.
    target.fail({ method: 'POST', path: CHART_DATA }, '500', 3);
    try {
      const task = await migrateSeeded(pair, 'Again target', 1);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      const [item] = task.result.items;
      expect(item.status).toBe('imported');
      expect(item.verification).toMatchObject({ ok: true, charts_linked: 2, classes: { passes: 2 } });
    } finally {
      target.clearFailures();
    }
    expect(target.count(CHART_DATA, mark)).toBe(4);
  }, 240_000);
});
