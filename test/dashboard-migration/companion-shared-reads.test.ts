import { describe, expect, it } from 'vitest';
import { companionContext } from '../../domain/migration/companions/context.ts';
import { forgetTargetObjects } from '../../domain/migration/companions/view-caches.ts';
import { forgetLists, memoisedLists } from '../../domain/migration/companions/recording.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetNotFoundError } from '../../lib/superset/errors.ts';

/** A client whose list reads count their calls: tags answer, reports 404 (ALERT_REPORTS off), themes fail once then answer. */
function countingClient() {
  const calls = { tags: 0, reports: 0, themes: 0, meta: 0 };
  const client = {
    tags: {
      list: async () => {
        calls.tags++;
        return [{ id: 1, name: 'finance', description: null }];
      },
    },
    reports: {
      list: async () => {
        calls.reports++;
        throw new SupersetNotFoundError({ method: 'GET', path: '/api/v1/report/', upstreamStatus: 404 }, 'Not found', undefined);
      },
    },
    themes: {
      list: async () => {
        calls.themes++;
        if (calls.themes === 1) throw new Error('connection reset');
        return [{ id: 3, uuid: 'u', theme_name: 'brand', json_data: '{}' }];
      },
    },
    meta: {
      get: async () => {
        calls.meta++;
        return { id: 1 };
      },
    },
  } as unknown as SupersetClient;
  return { client, calls };
}

describe("companions: an activity's list reads shared by its dashboards", () => {
  it('reads each list once per activity, keeps a 404, asks again after another failure and after the target was written', async () => {
    const { client, calls } = countingClient();
    const activity = {};
    const memo = memoisedLists(client, activity);
    expect(memoisedLists(client, activity)).toBe(memo);

    const [a, b] = await Promise.all([memo.tags.list(), memo.tags.list()]);
    expect(a).toEqual(b);
    a[0]!.name = 'changed by a caller';
    expect((await memo.tags.list())[0]!.name).toBe('finance'); // each caller gets its own copy
    expect(calls.tags).toBe(1);

    // A feature flag off stays off for the activity: one call, the 404 answered to every dashboard.
    await expect(memo.reports.list()).rejects.toBeInstanceOf(SupersetNotFoundError);
    await expect(memo.reports.list()).rejects.toBeInstanceOf(SupersetNotFoundError);
    expect(calls.reports).toBe(1);

    // Themes are a list too; a failure that is not a 404 is asked again.
    await expect(memo.themes.list()).rejects.toThrow('connection reset');
    expect(await memo.themes.list()).toHaveLength(1);
    await memo.themes.list();
    expect(calls.themes).toBe(2);

    // Per-object reads are never kept.
    await memo.meta.get('dashboard', 1);
    await memo.meta.get('dashboard', 1);
    expect(calls.meta).toBe(2);

    // Written (an import, a companion): the next comparison reads the lists again.
    forgetLists(client, activity);
    await memo.tags.list();
    expect(calls.tags).toBe(2);

    // Another activity (the next batch, maybe on another worker) reads for itself.
    await memoisedLists(client, {}).tags.list();
    expect(calls.tags).toBe(3);
  });

  it("reads a source dashboard's view once per activity: the comparison before the import and the writes after it share it", async () => {
    let reads = 0;
    const source = {
      meta: {
        get: async (kind: string, id: number) => {
          reads++;
          return { id, uuid: `${kind}-${id}`, name: `${kind} ${id}`, owners: [], roles: [], tags: [], theme_id: null };
        },
      },
      dashboards: { charts: async () => [{ id: 7 }], datasets: async () => [{ id: 8 }] },
    } as unknown as SupersetClient;
    const activity = {};
    const ctxFor = (a: object) =>
      companionContext({
        source,
        target: {} as SupersetClient,
        sourceDashboardId: 1,
        dashboardUuid: 'dashboard-1',
        title: 'x',
        datasetUuids: new Map(),
        mappings: new Map(),
        pauseReports: true,
        activity: a,
      });
    const before = await ctxFor(activity).sourceView();
    const after = await ctxFor(activity).sourceView();
    expect(after).toBe(before);
    expect(before.charts.map((c) => c.id)).toEqual([7]);
    expect(reads).toBe(3); // the dashboard, its chart, its dataset: once
    await ctxFor({}).sourceView();
    expect(reads).toBe(6); // another activity reads for itself
  });
});

describe('companions: the target dashboard read by what the caller knows of it', () => {
  it('reads nothing where the plan knows the target has no such dashboard, and by id where the import answered one', async () => {
    const asked: string[] = [];
    const target = {
      meta: {
        get: async (kind: string, id: number) => {
          asked.push(`${kind} ${id}`);
          return { id, uuid: null, name: `${kind} ${id}`, owners: [], roles: [], tags: [], theme_id: null };
        },
      },
      dashboards: {
        get: async (uuid: string) => {
          asked.push(`by uuid ${uuid}`);
          return { id: 41 };
        },
        charts: async () => [],
        datasets: async () => [],
      },
    } as unknown as SupersetClient;
    const ctxFor = (targetDashboardId: number | null | undefined) =>
      companionContext({
        source: {} as SupersetClient,
        target,
        sourceDashboardId: 1,
        dashboardUuid: 'dashboard-1',
        targetDashboardId,
        title: 'x',
        datasetUuids: new Map(),
        mappings: new Map(),
        pauseReports: true,
        activity: {},
      });
    expect(await ctxFor(null).targetView()).toBeNull();
    expect(asked).toEqual([]);
    expect((await ctxFor(42).targetView())?.dashboard.id).toBe(42);
    expect(asked).toEqual(['dashboard 42']);
    // Unknown (a backup's restore): looked up by uuid, as before.
    expect((await ctxFor(undefined).targetView())?.dashboard.id).toBe(41);
    expect(asked).toEqual(['dashboard 42', 'by uuid dashboard-1', 'dashboard 41']);
  });
});

describe('companions: a source dataset several dashboards share', () => {
  it('is read once per activity, each view with its own copy', async () => {
    const reads: string[] = [];
    const source = {
      meta: {
        get: async (kind: string, id: number) => {
          reads.push(`${kind} ${id}`);
          return { id, uuid: `${kind}-${id}`, name: `${kind} ${id}`, owners: [{ id: 1 }], roles: [], tags: [], theme_id: null };
        },
      },
      dashboards: { charts: async (id: number) => [{ id: 100 + id }], datasets: async () => [{ id: 8 }] },
    } as unknown as SupersetClient;
    const activity = {};
    const viewOf = (d: number) =>
      companionContext({
        source,
        target: {} as SupersetClient,
        sourceDashboardId: d,
        dashboardUuid: `dashboard-${d}`,
        title: 'x',
        datasetUuids: new Map(),
        mappings: new Map(),
        pauseReports: true,
        activity,
      }).sourceView();
    const [one, two] = await Promise.all([viewOf(1), viewOf(2)]);
    expect(reads.filter((r) => r === 'dataset 8')).toHaveLength(1);
    expect(reads.filter((r) => r.startsWith('chart'))).toEqual(['chart 101', 'chart 102']);
    one.datasets[0]!.owners.push({ id: 2 } as never);
    expect(two.datasets[0]!.owners).toHaveLength(1);
  });
});

describe('companions: a target dataset the comparisons before any write share', () => {
  it('is read once until the target is written', async () => {
    const reads: string[] = [];
    const target = {
      meta: {
        get: async (kind: string, id: number) => {
          reads.push(`${kind} ${id}`);
          return { id, uuid: `${kind}-${id}`, name: `${kind} ${id}`, owners: [], roles: [], tags: [], theme_id: null };
        },
      },
      dashboards: { charts: async (id: number) => [{ id: 100 + id }], datasets: async () => [{ id: 8 }] },
    } as unknown as SupersetClient;
    const activity = {};
    const viewOf = (d: number, sharedTargetLists: boolean) =>
      companionContext({
        source: {} as SupersetClient,
        target,
        sourceDashboardId: d,
        dashboardUuid: `dashboard-${d}`,
        targetDashboardId: d,
        title: 'x',
        datasetUuids: new Map(),
        mappings: new Map(),
        pauseReports: true,
        activity,
        sharedTargetLists,
      }).targetView();
    await Promise.all([viewOf(1, true), viewOf(2, true)]);
    expect(reads.filter((r) => r === 'dataset 8')).toHaveLength(1);
    // A phase that writes reads for itself; after a write the comparisons read again.
    await viewOf(3, false);
    expect(reads.filter((r) => r === 'dataset 8')).toHaveLength(2);
    forgetTargetObjects(target, activity);
    await viewOf(4, true);
    expect(reads.filter((r) => r === 'dataset 8')).toHaveLength(3);
  });
});
