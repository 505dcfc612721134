import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayProxy, ProxiedRequest } from '../support/gateway-proxy.ts';
import { updateDashboard } from '../support/superset/fixtures.ts';
import { migrateOnPair } from './pair-tasks.ts';
import { migrateSeeded, realPairAvailable, seedForMigration, startRealPair, type RealPair } from './real-pair.ts';

/**
 * What a first migration asks of Superset beyond the bare export and import (issue 30's bench
 * goals), counted on the real Superset 6.1.0 a → b behind a recording proxy each
 * (test/support/gateway-proxy.ts): reads the plan or the import already answered are not asked
 * again, and the companions' source reads go ahead of the plans comparing them. The read-ahead is
 * proven without a timer: the proxy holds one call until another is seen.
 */
let pair: RealPair;

const byUuid = /^\/api\/v1\/dashboard\/[0-9a-f]{8}-[0-9a-f]{4}-/;
const chartDetail = /^\/api\/v1\/chart\/\d+$/;
const datasetDetail = /^\/api\/v1\/dataset\/\d+$/;
/** The chart list filtered by dashboard: each chart's uuid, where the chart's detail lacks it. */
const chartUuidLists = (requests: ProxiedRequest[], since: number) =>
  requests.slice(since).filter((r) => r.method === 'GET' && r.path === '/api/v1/chart/' && JSON.stringify(r.q ?? '').includes('rel_m_m'))
    .length;

/** A list read (`q`) filtered to ids that include this one. */
const listsIds = (q: unknown, id: number) =>
  ((q as { filters?: Array<{ col: string; opr: string; value: unknown }> } | undefined)?.filters ?? []).some(
    (f) => f.col === 'id' && f.opr === 'in' && Array.isArray(f.value) && f.value.includes(id),
  );

/** What a test holds (`held` at `at`) until `watched` is asked for what `seen` matches. */
interface Hold {
  at: GatewayProxy;
  held: Parameters<GatewayProxy['hold']>[0];
  watched: GatewayProxy;
  seen: Parameters<GatewayProxy['seen']>[0];
}

/**
 * Migrates `n` seeded dashboards with a hold in place (`hold`, given their ids) and expects the
 * task to succeed: the hold is released only by what it waits for, with no timer, and a read ahead
 * is the only way the task asks for `seen` while `held` waits. Without it the task never ends and
 * the test's own timeout fails it. Answers the task and the ids.
 */
async function migrateHeldUntilSeen(prefix: string, n: number, hold: (ids: number[]) => Hold) {
  let ids: number[] = [];
  let at: GatewayProxy | undefined;
  try {
    const task = await migrateSeeded(pair, prefix, n, (seeded) => {
      ids = seeded;
      const h = hold(seeded);
      at = h.at;
      h.at.hold(h.held, h.watched.seen(h.seen));
    });
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    return { task, ids };
  } finally {
    at?.clearHolds();
  }
}

describe.runIf(realPairAvailable())('a first migration asks Superset only what it needs: a (6.1.0) → b (6.1.0)', () => {
  beforeAll(async () => {
    pair = await startRealPair();
  }, 180_000);
  afterAll(async () => pair?.close());

  it('looks no dashboard up by uuid in the target for its companions, and verifies without reading a chart the batch has exported', async () => {
    const { source, target } = pair;
    const marks = [source.mark(), target.mark()] as const;
    // The first dashboard's charts have a saved query context, which only a chart's detail and the export give (the chart
    // lists leave it out); their one query asks 77 and 78 rows, which no query Switchyard builds from form_data asks.
    const task = await migrateSeeded(pair, 'Counted', 4, undefined, { rowLimits: (i) => (i === 0 ? [77, 78] : undefined) });
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    for (const item of task.result.items) {
      expect(item.status).toBe('imported');
      expect(item.verification).toMatchObject({ ok: true, charts_linked: 2 });
      expect(item.verification.charts.every((c: { uuid?: string }) => typeof c.uuid === 'string')).toBe(true);
    }
    expect(task.result.items[0].verification.charts.map((c: { check?: string }) => c.check)).toEqual([
      'saved_query_context',
      'saved_query_context',
    ]);
    // The plan's index knew each dashboard was not there: no lookup by uuid for the companions' comparison (5 before),
    // and the joint import finds its dashboards in one list read (a lone first import asked which id it got: 1 before).
    // (The companions' read after the import, by the id the import answered, is companion-shared-reads.test.ts's.)
    expect(target.count(byUuid, marks[1])).toBe(0);
    // A 6.x chart's detail carries its uuid: no per-dashboard list of them on either side (4 a side before).
    expect(chartUuidLists(source.requests, marks[0])).toBe(0);
    expect(chartUuidLists(target.requests, marks[1])).toBe(0);
    // The companions read the source's charts and datasets in one list read each, and the source checks take each chart's
    // uuid, type and saved query context from the batch's export: no chart detail read in the source (8 before, 16 before that),
    // and no dataset detail (1 before).
    expect(source.count(chartDetail, marks[0])).toBe(0);
    expect(source.count(datasetDetail, marks[0])).toBe(0);
    // The saved query contexts the export carried are what the source ran, both charts in one call (one dataset).
    const asked = (f: typeof source, mark: number) =>
      f.requests
        .slice(mark)
        .filter((r) => r.path === '/api/v1/chart/data')
        .map((r) => ((r.json as { queries?: Array<{ row_limit?: number }> }).queries ?? []).map((q) => q.row_limit));
    // (The batch's other charts, on the same dataset, go in that call too.)
    const savedAsked = (f: typeof source, mark: number) => asked(f, mark).filter((limits) => limits.includes(77));
    expect(savedAsked(source, marks[0])).toEqual([expect.arrayContaining([77, 78])]);
    // The target's copies keep it (Superset's import stores it as exported), and the target's checks run it too.
    expect(savedAsked(target, marks[1])).toEqual([expect.arrayContaining([77, 78])]);
    // Each source dashboard's chart list and own meta come from the batch's export and one dashboard list and one chart
    // list read a batch (companions/views-listed.ts), handed to its chart checks: no per-dashboard read (4 and 4 before;
    // 8 chart lists before that).
    expect(source.count(/^\/api\/v1\/dashboard\/\d+\/charts$/, marks[0])).toBe(0);
    expect(source.count(/^\/api\/v1\/dashboard\/\d+$/, marks[0])).toBe(0);
  }, 600_000);

  it("compares a rerun's companions with one dashboard, chart and dataset list a side, no detail read; checks the target again", async () => {
    const { source, target } = pair;
    const { ids, mapping } = await seedForMigration(pair, 'Listed', 3);
    expect((await migrateOnPair(pair, ids, mapping)).status).toBe('SUCCEEDED');
    const marks = [source.mark(), target.mark()] as const;
    const again = await migrateOnPair(pair, ids, mapping);
    expect(again.status, JSON.stringify(again.error)).toBe('SUCCEEDED');
    for (const item of again.result.items) expect(item.status).toBe('unchanged');
    // 6 chart and 3 dataset details a side before (then 2 and 1 per dashboard). The dashboards and their chart lists from
    // the two exports the rerun compared, and one dashboard list read a side (companions/views-listed.ts): 3 details and 3
    // chart lists a side before. Two list reads by ids a side (charts, datasets).
    const reads = (side: GatewayProxy, mark: number) => ({
      chartDetails: side.count(chartDetail, mark),
      datasetDetails: side.count(datasetDetail, mark),
      dashboardDatasets: side.count(/^\/api\/v1\/dashboard\/\d+\/datasets$/, mark),
      dashboardDetails: side.count(/^\/api\/v1\/dashboard\/\d+$/, mark),
      dashboardChartLists: side.count(/^\/api\/v1\/dashboard\/\d+\/charts$/, mark),
      listsByIds: side.requests
        .slice(mark)
        .filter((r) => r.method === 'GET' && /^\/api\/v1\/(chart|dataset)\/$/.test(r.path) && JSON.stringify(r.q ?? '').includes('"in"'))
        .length,
      chartData: side.count('/api/v1/chart/data', mark),
    });
    const none = { chartDetails: 0, datasetDetails: 0, dashboardDatasets: 0, dashboardDetails: 0, dashboardChartLists: 0, listsByIds: 2 };
    expect(reads(source, marks[0])).toEqual({ ...none, chartData: 0 });
    // A default rerun checks the target's charts again (an unchanged dashboard carries its last verification only with
    // `verification: "if_changed"`): one chart-data call for the batch's charts (one dataset), and each dashboard's chart
    // list, which that check reads on its own (settle-unchanged hands it no list of the companions' views).
    expect(reads(target, marks[1])).toEqual({ ...none, chartData: 1, dashboardChartLists: ids.length });
    // Asked fresh (force), not from Superset's data cache: the last verification sent the very same queries (unchanged-checks.ts).
    const checks = target.requests.slice(marks[1]).filter((r) => r.path === '/api/v1/chart/data');
    expect(checks.map((r) => (r.json as { force?: unknown }).force)).toEqual([true]);
  }, 600_000);

  it("reads the next dashboards' companion views while the batch plans the first of them", async () => {
    // The batch plans ids[0..3] one after another. The second of them cannot finish its
    // comparison (its embedded configuration is held) until the source is asked for the third
    // one's view (in the dashboard list the views read): only a read ahead asks for it then.
    await migrateHeldUntilSeen('Ahead', 4, (ids) => ({
      at: pair.source,
      held: { method: 'GET', path: `/api/v1/dashboard/${ids[1]}/embedded` },
      watched: pair.source,
      seen: { method: 'GET', path: '/api/v1/dashboard/', query: (q) => listsIds(q, ids[2]!) },
    }));
  }, 600_000);

  it("reads the next dashboards' embedded configurations while the batch plans the first of them", async () => {
    // The batch plans ids[0..3] one after another, each asking for its embedded configuration. The second one's
    // is held until the fourth one's is asked for: only reads ahead of the plans ask for it then.
    await migrateHeldUntilSeen('Embedded', 4, (ids) => ({
      at: pair.source,
      held: { method: 'GET', path: `/api/v1/dashboard/${ids[1]}/embedded` },
      watched: pair.source,
      seen: { method: 'GET', path: `/api/v1/dashboard/${ids[3]}/embedded` },
    }));
  }, 600_000);

  it("exports the next batch's dashboards from the source while the target imports", async () => {
    const { source, target } = pair;
    const mark = source.mark();
    // The first batch reads and imports 16; its import is held until the source is asked for dashboards of the
    // next batch (ids[16..19]): only an export ahead asks for them before that import returns.
    const { ids } = await migrateHeldUntilSeen('Upcoming', 20, (seeded) => ({
      at: target,
      held: { method: 'POST', path: '/api/v1/dashboard/import/' },
      watched: source,
      seen: { method: 'GET', path: '/api/v1/dashboard/export/', query: (q) => Array.isArray(q) && q.includes(seeded[17]!) },
    }));
    // Each dashboard exported from the source once, whichever batch read it.
    const exported = source.requests
      .slice(mark)
      .filter((r) => r.path === '/api/v1/dashboard/export/')
      .flatMap((r) => (Array.isArray(r.q) ? (r.q as number[]) : []));
    expect(exported.filter((id) => ids.includes(id)).sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
  }, 600_000);

  it("reads the next batch's companion views during this batch's import, and each side's users once a task", async () => {
    const { source, target } = pair;
    const [mark, targetMark] = [source.mark(), target.mark()];
    // The first batch's import is held until the source is asked for the embedded configuration of a dashboard of the
    // next batch (ids[17]): only views read ahead of that batch, during this import, ask for it then.
    await migrateHeldUntilSeen('Views ahead', 20, (seeded) => ({
      at: target,
      held: { method: 'POST', path: '/api/v1/dashboard/import/' },
      watched: source,
      seen: { method: 'GET', path: `/api/v1/dashboard/${seeded[17]}/embedded` },
    }));
    // Two batches, one task snapshot: each side's users (and the source's lists) read once (once a batch before). No
    // role list on either side: only the roles kind maps by roles, and these dashboards name none.
    for (const [side, since] of [
      [source, mark],
      [target, targetMark],
    ] as const) {
      expect(side.count('/api/v1/security/users/', since)).toBe(1);
      expect(side.count('/api/v1/dashboard/related/roles', since)).toBe(0);
    }
    // The source's dashboards listed once a batch: the first batch's rows (its roles, then its views), the second's
    // with the views read ahead of it (which its roles take: no rows of their own).
    expect(source.count('/api/v1/dashboard/', mark)).toBe(2);
  }, 600_000);

  it("asks for a batch's embedded configurations, accounts and chart rows while its import runs, and a rerun's only once the source's export is answered", async () => {
    const { source, target } = pair;
    const { ids, mapping } = await seedForMigration(pair, 'Embedded late', 3);
    const embedded = new RegExp(`^/api/v1/dashboard/(${ids.join('|')})/embedded$`);
    // A first migration: the source's embedded configurations and chart list, and both sides' accounts, are held until
    // the import is sent. A plan that compared them before importing would wait for them forever, and the test's own
    // timeout would fail it (roles, compared before it, need the dashboards' list rows alone).
    const mark = source.mark();
    const importSent = target.seen({ method: 'POST', path: '/api/v1/dashboard/import/' });
    source.hold({ method: 'GET', path: embedded }, importSent);
    for (const side of [source, target]) side.hold({ method: 'GET', path: '/api/v1/security/users/' }, importSent);
    source.hold({ method: 'GET', path: '/api/v1/chart/' }, importSent);
    let first;
    try {
      first = await migrateOnPair(pair, ids, mapping);
    } finally {
      source.clearHolds();
      target.clearHolds();
    }
    expect(first.status, JSON.stringify(first.error)).toBe('SUCCEEDED');
    // Compared after the import all the same: each dashboard reports its embedded configuration's kind.
    for (const item of first.result.items) expect(item.companions.map((r: { kind: string }) => r.kind)).toContain('embedded');
    expect(source.count(embedded, mark)).toBe(3);
    // The dashboards' rows the roles were compared on served their views after the import too: one dashboard list read.
    expect(source.count('/api/v1/dashboard/', mark)).toBe(1);

    // A rerun: the source's export is answered before anything else is asked of the source (its other reads wait
    // for it); held until the source's databases are listed (begun beside it), when no embedded read may have come.
    const again = source.mark();
    let askedBeforeExport = -1;
    const listed = source
      .seen({ method: 'GET', path: '/api/v1/database/' })
      .then(() => (askedBeforeExport = source.count(embedded, again)));
    source.hold({ method: 'GET', path: '/api/v1/dashboard/export/' }, listed);
    let rerun;
    try {
      rerun = await migrateOnPair(pair, ids, mapping);
    } finally {
      source.clearHolds();
    }
    expect(rerun.status, JSON.stringify(rerun.error)).toBe('SUCCEEDED');
    expect(rerun.result.items.map((i: { status: string }) => i.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(askedBeforeExport).toBe(0);
    expect(source.count(embedded, again)).toBe(3);
  }, 600_000);

  it("verifies a rerun's changed dashboard without querying its source charts again, unchanged since they passed", async () => {
    const { source, target } = pair;
    const { ids, mapping } = await seedForMigration(pair, 'Kept', 2);
    expect((await migrateOnPair(pair, ids, mapping)).status).toBe('SUCCEEDED');
    // The dashboard edited in the source (its title), its charts not: imported and verified again.
    await updateDashboard(pair.a, ids[0]!, { dashboard_title: 'Kept 0, renamed' });
    const marks = [source.mark(), target.mark()] as const;
    const again = await migrateOnPair(pair, ids, mapping);
    expect(again.status, JSON.stringify(again.error)).toBe('SUCCEEDED');
    const renamed = again.result.items.find((i: { id: number }) => i.id === ids[0]);
    expect(renamed).toMatchObject({ status: 'imported', verification: { ok: true, charts_linked: 2 } });
    expect(target.count('/api/v1/chart/data', marks[1])).toBeGreaterThan(0);
    expect(source.count('/api/v1/chart/data', marks[0])).toBe(0); // 1 (both charts on one dataset, one call) before
  }, 600_000);

  it('checks the source charts while the target imports, and the verification does not query them again', async () => {
    const { source, target } = pair;
    const importPath = '/api/v1/dashboard/import/';
    const marks = [source.mark(), target.mark()] as const;
    // The first import is held until the source answers a chart query: only a source check made
    // beside the import asks one then (the verification starts after the batch returns).
    const first = target.count(importPath);
    const { task } = await migrateHeldUntilSeen('Beside', 3, () => ({
      at: target,
      held: { method: 'POST', path: importPath, when: () => target.count(importPath) - first === 1 },
      watched: source,
      seen: { method: 'POST', path: '/api/v1/chart/data' },
    }));
    for (const item of task.result.items) expect(item.verification).toMatchObject({ ok: true, charts_linked: 2 });
    // One source chart-data call for the batch (its dashboards' charts on one dataset go together), none again in the
    // verification; the target's the same (one call per dashboard before).
    expect(source.count('/api/v1/chart/data', marks[0])).toBe(1);
    expect(target.count('/api/v1/chart/data', marks[1])).toBe(1);
  }, 600_000);
});
