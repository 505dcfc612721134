import { expect } from 'vitest';
import { readViews, type ChartLists, type DashboardView } from '../../domain/migration/companions/views.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import { SupersetClient as LibClient } from '../../lib/superset/client.ts';
import type { ObjectMeta } from '../../lib/superset/resources/object-meta.ts';

/**
 * Reads these dashboards' companion views both ways on a real Superset, one dashboard at a time
 * (its detail and chart list) and from its export and list reads (companions/views-listed.ts),
 * and expects the same views and the same chart lists (Superset's own form_data, which the chart
 * checks build on), with no read per dashboard the second way. Answers the views read the second way.
 */
export async function expectListedViewsAsRead(
  conn: { baseUrl: string; username: string; password: string },
  ids: number[],
): Promise<Map<number, DashboardView | null>> {
  const reads = new Map<string, number>();
  let counting = false;
  const logger = {
    debug(o: object, msg?: string) {
      const call = o as { method?: string; path?: string };
      if (!counting || msg !== 'superset call' || call.method !== 'GET' || !call.path) return;
      const shape = call.path.replace(/\/\d+/g, '/{id}');
      reads.set(shape, (reads.get(shape) ?? 0) + 1);
    },
    warn() {},
  };
  const lib = new LibClient(conn, { logger });
  try {
    const bundles = splitByDashboard(Bundle.fromZip(await lib.dashboards.export(ids)));
    const oneByOne = await readViews(lib, ids, new Map(), new Map());
    const lists: ChartLists = new Map();
    counting = true;
    const listed = await readViews(lib, ids, new Map(), lists, (id) => bundles.get(id));
    counting = false;
    // One list read of the dashboards, one of the charts, one of the datasets; no read per dashboard or chart.
    expect(Object.fromEntries(reads)).toEqual({ '/api/v1/dashboard/': 1, '/api/v1/chart/': 1, '/api/v1/dataset/': 1 });

    const themes = await lib.themes.list().catch(() => []);
    for (const id of ids) {
      const mine = listed.get(id)!;
      const theirs = oneByOne.get(id)!;
      // The detail names the theme by id (a release without themes: none), the export by uuid.
      const { theme_uuid, theme_id: mineId, ...dashboard } = mine.dashboard;
      const { theme_id, ...expected } = theirs.dashboard;
      // 4.1 and 5.0 leave a dashboard's uuid out of its detail; the list gives it (nothing compares it: the views pair charts and datasets by uuid).
      if (expected.uuid === null) expected.uuid = dashboard.uuid;
      expect(theme_uuid ?? null).toBe(themes.find((t) => t.id === theme_id)?.uuid ?? null);
      if (theme_uuid === undefined) expect(mineId).toBeNull();
      expect(sorted(dashboard)).toEqual(sorted(expected));
      // In the dashboard's layout order from its export, in the order of Superset's relationship from the detail.
      expect(byId(mine.charts).map(sorted)).toEqual(byId(theirs.charts).map(sorted));
      expect(byId(mine.datasets)).toEqual(byId(theirs.datasets));
      const direct = await lib.dashboards.charts(id);
      expect(byId((await lists.get(id))!.map((c) => ({ id: c.id, slice_name: c.slice_name, form_data: c.form_data })))).toEqual(
        byId(direct.map((c) => ({ id: c.id, slice_name: c.slice_name, form_data: c.form_data }))),
      );
    }
    return listed;
  } finally {
    lib.close();
  }
}

/** Owners, roles and tags in a stable order (a list and a detail may order them apart). */
function sorted(m: ObjectMeta): ObjectMeta {
  return {
    ...m,
    owners: [...m.owners].sort((x, y) => x.id - y.id),
    roles: [...m.roles].sort((x, y) => x.id - y.id),
    tags: [...m.tags].sort(),
  };
}

function byId<T extends { id: number }>(rows: T[]): T[] {
  return [...rows].sort((x, y) => x.id - y.id);
}
