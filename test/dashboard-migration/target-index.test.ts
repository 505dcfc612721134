import { describe, expect, it } from 'vitest';
import { compareDashboardRules } from '../../domain/migration/rls.ts';
import { TargetIndex } from '../../domain/migration/target-index.ts';
import type { IndexedResource, MigrationUpstream } from '../../domain/migration/upstream.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { SupersetApiError } from '../../lib/superset/errors.ts';

/**
 * The target index's reading rules, on an in-memory upstream that records each list call:
 * what a later bundle needs is read again, and only then; slugs that changed hands in place are
 * seen through one "most recently changed first" page.
 */
type Row = Record<string, unknown> & { id: number };

function upstream() {
  const rows: Record<IndexedResource, Row[]> = { dashboard: [], chart: [], dataset: [] };
  const calls: string[] = [];
  const u = {
    rows,
    calls,
    version: async () => '6.1.0',
    listDatabases: async () => [{ id: 1, uuid: 'db-1', database_name: 'warehouse' }],
    rlsRules: async () => {
      calls.push('rls');
      return [
        { id: 9, name: 'emea only', filter_type: 'Regular', clause: "region = 'EMEA'", group_key: null, tables: [{ id: 4 }], roles: [] },
      ];
    },
    async listRows(resource: IndexedResource, _columns: string[], afterId?: number) {
      calls.push(`${resource}${afterId === undefined ? '' : `>${afterId}`}`);
      return rows[resource].filter((r) => afterId === undefined || r.id > afterId);
    },
    async recentDashboards(page: number, pageSize: number) {
      calls.push(`recent:${page}`);
      const sorted = [...rows.dashboard].sort((a, b) => String(b.changed_on_utc).localeCompare(String(a.changed_on_utc)));
      return sorted.slice(page * pageSize, (page + 1) * pageSize);
    },
  };
  return u as typeof u & MigrationUpstream;
}

const bundleWith = (files: Record<string, Record<string, unknown>>) =>
  new Bundle(
    'b',
    new Map(
      Object.entries({ 'metadata.yaml': {}, ...files }).map(([path, content]) => [
        path,
        { path, kind: path.split('/')[0] as never, content },
      ]),
    ),
  );

describe('the target index', () => {
  it('refreshes its kinds side by side: every list is asked before the first answers', async () => {
    const u = upstream();
    const index = await TargetIndex.build(u);
    u.rows.chart.push({ id: 3, uuid: 'c-3' });
    u.rows.dataset.push({ id: 4, uuid: 'ds-4', table_name: 't', schema: null, database: { id: 1, database_name: 'warehouse' } });
    // Each list answers only once all three were asked: one after another, the refresh would never end.
    const asked = new Set<string>();
    const allAsked = Promise.withResolvers<void>();
    const list = u.listRows.bind(u);
    u.listRows = async (resource: IndexedResource, columns: string[], afterId?: number) => {
      asked.add(resource);
      if (asked.size === 3) allAsked.resolve();
      await allAsked.promise;
      return list(resource, columns, afterId);
    };
    // One after another, the refresh never ends and the test's own timeout fails it.
    await index.refresh();
    expect(u.calls.slice(3).sort()).toEqual(['chart>0', 'dashboard>0', 'dataset>0']);
    expect(index.dataset('ds-4')?.id).toBe(4);
  });

  it('reads again what an import wrote only when a later bundle needs it, and only what is new', async () => {
    const u = upstream();
    u.rows.dataset.push({ id: 1, uuid: 'ds-old', table_name: 'orders', schema: null, database: { id: 1, database_name: 'warehouse' } });
    const index = await TargetIndex.build(u);
    expect(u.calls).toEqual(['dashboard', 'chart', 'dataset']);

    // An import wrote dataset ds-new and chart c-new; Superset gave them ids.
    const imported = bundleWith({ 'datasets/warehouse/sales.yaml': { uuid: 'ds-new' }, 'charts/Sales_7.yaml': { uuid: 'c-new' } });
    index.noteImportedContent(imported);
    u.rows.dataset.push({ id: 2, uuid: 'ds-new', table_name: 'sales', schema: null, database: { id: 1, database_name: 'warehouse' } });
    u.rows.chart.push({ id: 7, uuid: 'c-new' });

    // A bundle that holds neither: nothing is read.
    await index.learnWritten(bundleWith({ 'datasets/warehouse/orders.yaml': { uuid: 'ds-old' } }));
    expect(u.calls).toHaveLength(3);
    // A bundle holding the written dataset: datasets above the highest known id, once; the chart is not needed.
    await index.learnWritten(bundleWith({ 'datasets/warehouse/sales.yaml': { uuid: 'ds-new' } }));
    expect(u.calls.slice(3)).toEqual(['dataset>1']);
    expect(index.dataset('ds-new')?.id).toBe(2);
    expect(index.datasetOnTable(1, null, 'sales')?.uuid).toBe('ds-new');
    await index.learnWritten(bundleWith({ 'datasets/warehouse/sales.yaml': { uuid: 'ds-new' } }));
    expect(u.calls).toHaveLength(4);
    // The chart, once a bundle holds it.
    await index.learnWritten(bundleWith({ 'charts/Sales_7.yaml': { uuid: 'c-new' } }));
    expect(u.calls.slice(4)).toEqual(['chart>0']);
    expect(index.chart('c-new')?.id).toBe(7);
  });

  it('sees a slug that changed hands in place through the most recently changed dashboards', async () => {
    const u = upstream();
    u.rows.dashboard.push(
      { id: 1, uuid: 'd-1', slug: 'sales', dashboard_title: 'Sales', changed_on_utc: '2026-11-20T10:00:00.000000+0000' },
      { id: 2, uuid: 'd-2', slug: 'other', dashboard_title: 'Other', changed_on_utc: '2026-11-21T10:00:00.000000+0000' },
    );
    const index = await TargetIndex.build(u);
    expect(index.dashboardBySlug('sales')?.id).toBe(1);
    // Someone gives dashboard 1 another slug and dashboard 2 takes 'sales', in Superset.
    u.rows.dashboard[0] = { ...u.rows.dashboard[0], slug: 'sales-old', changed_on_utc: '2026-11-23T10:00:00.000000+0000' };
    u.rows.dashboard[1] = { ...u.rows.dashboard[1], slug: 'sales', changed_on_utc: '2026-11-23T10:00:01.000000+0000' };
    expect(await index.refreshDashboardsChanged(1)).toBe(true);
    expect(index.dashboardBySlug('sales')?.id).toBe(2);
    expect(index.dashboardBySlug('sales-old')?.id).toBe(1);
    // Pages were read until one ended (page size 1 here): both changed rows seen.
    expect(u.calls.filter((c) => c.startsWith('recent'))).toEqual(['recent:0', 'recent:1', 'recent:2']);
  });

  it('learns from a 400 that a release does not filter on id, and reads its lists whole from then on', async () => {
    const u = upstream();
    const listRows = u.listRows.bind(u);
    u.listRows = async (resource, columns, afterId) => {
      if (afterId !== undefined) {
        u.calls.push(`${resource}>${afterId} refused`);
        throw new SupersetApiError(
          { method: 'GET', path: `/api/v1/${resource}/`, upstreamStatus: 400 },
          'Filter column: id not allowed to filter',
          {},
        );
      }
      return listRows(resource, columns);
    };
    u.rows.dataset.push({ id: 1, uuid: 'ds-1', table_name: 'orders', schema: null, database: { id: 1, database_name: 'warehouse' } });
    const index = await TargetIndex.build(u);
    index.noteImportedContent(bundleWith({ 'datasets/warehouse/sales.yaml': { uuid: 'ds-2' } }));
    u.rows.dataset.push({ id: 2, uuid: 'ds-2', table_name: 'sales', schema: null, database: { id: 1, database_name: 'warehouse' } });
    await index.learnWritten(bundleWith({ 'datasets/warehouse/sales.yaml': { uuid: 'ds-2' } }));
    expect(index.dataset('ds-2')?.id).toBe(2);
    await index.refresh();
    expect(u.calls).toEqual(['dashboard', 'chart', 'dataset', 'dataset>1 refused', 'dataset', 'dashboard', 'chart', 'dataset']);
  });

  it('sees every dashboard of a target that had none when it was read, change times or not', async () => {
    const u = upstream();
    const started = Date.now();
    const index = await TargetIndex.build(u);
    // Read whole since `started`: nothing to refresh, no call.
    expect(await index.refreshDashboardsChanged(1, started)).toBe(true);
    expect(u.calls.filter((c) => c.startsWith('recent'))).toEqual([]);
    // A first migration imported one; someone created another (their rows say no change time).
    u.rows.dashboard.push(
      { id: 1, uuid: 'd-1', slug: 'sales', dashboard_title: 'Sales' },
      { id: 2, uuid: 'd-2', slug: 'other', dashboard_title: 'Other' },
    );
    expect(await index.refreshDashboardsChanged(1)).toBe(true);
    expect(index.dashboardBySlug('sales')?.id).toBe(1);
    expect(index.dashboardBySlug('other')?.id).toBe(2);
    // Pages to the end (page size 1): the third is short.
    expect(u.calls.filter((c) => c.startsWith('recent'))).toEqual(['recent:0', 'recent:1', 'recent:2']);
  });

  it('reads the source databases again only for a uuid it does not know', async () => {
    const u = upstream();
    let reads = 0;
    const dbs = [{ id: 1, uuid: 'db-1', database_name: 'warehouse' }];
    u.listDatabases = async () => (reads++, [...dbs]);
    const index = await TargetIndex.build(u, { kinds: ['dataset'] });
    expect(reads).toBe(1);
    expect((await index.databasesCovering(['db-1'])).map((d) => d.id)).toEqual([1]);
    expect(reads).toBe(1);
    dbs.push({ id: 2, uuid: 'db-2', database_name: 'lake' });
    expect((await index.databasesCovering(['db-1', 'db-2'])).map((d) => d.id)).toEqual([1, 2]);
    expect(reads).toBe(2);
  });

  it('says so when the release cannot tell when dashboards changed', async () => {
    const u = upstream();
    u.rows.dashboard.push({ id: 1, uuid: 'd-1', slug: 'sales', dashboard_title: 'Sales' });
    const index = await TargetIndex.build(u);
    expect(await index.refreshDashboardsChanged()).toBe(false);
  });

  it("reads a target's row-level-security rules once it has a dataset, and a dashboard's only where its datasets are there", async () => {
    const sales = { sourceUuid: 'ds-src', sourceDatabaseUuid: 'db-1', schema: null, table_name: 'sales', targetUuid: 'ds-4' };
    const empty = upstream();
    const src = upstream();
    src.rows.dataset.push({ id: 4, uuid: 'ds-src', table_name: 'sales', schema: null, database: { id: 1, database_name: 'warehouse' } });
    const source = await TargetIndex.build(src, { kinds: [], rls: 'always' });
    const fresh = await TargetIndex.build(empty, { rls: 'withDatasets' });
    // No dataset there (a first migration into it): no rule can touch one of the dashboard's, and none is read.
    const first = await compareDashboardRules({ sourceIndex: source, targetIndex: fresh, datasets: [sales] });
    expect(first.source.map((r) => r.name)).toEqual(['emea only']);
    expect(first.target).toEqual([]);
    expect(first.differences.map((d) => d.difference)).toEqual(['missing_in_target']);
    expect(empty.calls).not.toContain('rls');

    const populated = upstream();
    populated.rows.dataset.push({
      id: 4,
      uuid: 'ds-4',
      table_name: 'sales',
      schema: null,
      database: { id: 1, database_name: 'warehouse' },
    });
    const index = await TargetIndex.build(populated, { rls: 'withDatasets' });
    // Read ahead as the dataset list landed, and once: the comparison takes that read.
    expect(populated.calls.filter((c) => c === 'rls')).toHaveLength(1);
    const again = await compareDashboardRules({ sourceIndex: source, targetIndex: index, datasets: [sales] });
    expect(again.target.map((r) => r.name)).toEqual(['emea only']);
    expect(populated.calls.filter((c) => c === 'rls')).toHaveLength(1);
  });
});
