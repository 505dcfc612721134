import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSeeded, realPairAvailable, startRealPair, type RealPair } from './real-pair.ts';

/**
 * The target's side of a batch's verification begins inside the batch, right after its imports,
 * beside the source's checks (domain/migration/target-checks-ahead.ts). Counted and
 * ordered on the real Superset 6.1.0 a → b behind a recording proxy each
 * (test/support/gateway-proxy.ts). The verification making again a check that failed inside the
 * batch needs a chart query Superset refuses on demand: target-checks-ahead-fake.test.ts.
 */
let pair: RealPair;

const CHART_DATA = '/api/v1/chart/data';
const dashboardCharts = /^\/api\/v1\/dashboard\/\d+\/charts$/;

describe.runIf(realPairAvailable())("a batch checks the target's charts as soon as it has imported them: a (6.1.0) → b (6.1.0)", () => {
  beforeAll(async () => {
    pair = await startRealPair();
  }, 180_000);
  afterAll(async () => pair?.close());

  it("queries the target while the source's checks still run, and the verification does not query it again", async () => {
    const { source, target } = pair;
    const marks = [source.mark(), target.mark()] as const;
    // The source's chart queries (made beside the imports; the batch waits for them) are held until
    // the target is asked one: only a target check made inside the batch asks one then, since the
    // verification starts after the batch returns. No timer releases them: without the checks inside the batch the task
    // never ends, and the test's own timeout fails it.
    source.hold({ method: 'POST', path: CHART_DATA }, target.seen({ method: 'POST', path: CHART_DATA }));
    try {
      const task = await migrateSeeded(pair, 'Ahead target', 3);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.items).toHaveLength(3);
      for (const item of task.result.items) expect(item.verification).toMatchObject({ ok: true, charts_linked: 2 });
    } finally {
      source.clearHolds();
    }
    // One target chart-data call for the batch (its dashboards' charts on one dataset go together), none again; each
    // dashboard's charts from the companions' views of the target (its export and one chart list read), no per-dashboard
    // chart list.
    expect(target.count(CHART_DATA, marks[1])).toBe(1);
    expect(target.count(dashboardCharts, marks[1])).toBe(0);
    // Each chart's uuid, viz type and saved query context from one export of the batch's imported dashboards (after its
    // writes), the uuids from the chart list the companions' views read after the import: no chart detail read (one per
    // chart before), and one chart list by ids for the batch (a second one for the uuids before). The verification records
    // that export as the target's state: one export a batch, none of its own.
    expect(target.count(/^\/api\/v1\/chart\/\d+$/, marks[1])).toBe(0);
    expect(target.count('/api/v1/dashboard/export/', marks[1])).toBe(1);
    const byIds = (path: string) =>
      target.requests
        .slice(marks[1])
        .filter((r) => r.method === 'GET' && r.path === path && /"col":"id","opr":"in"/.test(JSON.stringify(r.q ?? {})));
    expect(byIds('/api/v1/chart/')).toHaveLength(1);
    // The new dashboards' ids were read with the columns those views compare (owners, roles, tags, certification): the
    // views list no dashboard by ids of their own (one more list read a batch before).
    expect(byIds('/api/v1/dashboard/')).toHaveLength(0);
  }, 600_000);
});
