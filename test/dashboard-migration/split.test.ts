import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { mergeBundles, splitByDashboard } from '../../lib/bundles/split.ts';
import { buildSource, client } from './support.ts';

/**
 * A batch of a migration exports its dashboards in one call and splits the export per dashboard.
 * Each part must be exactly what Superset exports for that dashboard alone (same files, same
 * content), on every release the migration supports, or the plan, the unchanged check and the
 * import would see something else than a dashboard exported on its own.
 */
const enabled = inject('supersets') !== null;

describe.skipIf(!enabled)('an export of several dashboards, split per dashboard', () => {
  for (const name of ['a', 'c'] as const) {
    it(`equals each dashboard's own export (Superset ${name === 'a' ? '6.1.0' : '6.0.0'})`, { timeout: 180_000 }, async () => {
      const c = await client(name);
      const P = `s${name}${Date.now().toString(36)}`;
      const dir = path.join(inject('runDir'), P);
      // Two sources: dashboards on two datasets and two databases, so parts differ in more than the dashboard.
      const one = await buildSource(c, `${P}x`, dir, { dashboards: 2 });
      const two = await buildSource(c, `${P}y`, dir, { dashboards: 1, table: 'customers' });
      const ids = [...one.dashboards, ...two.dashboards].map((d) => d.id);
      const parts = splitByDashboard(Bundle.fromZip(new Uint8Array(await c.exportDashboards(ids))));
      expect([...parts.keys()].sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
      for (const id of ids) {
        const alone = Bundle.fromZip(new Uint8Array(await c.exportDashboards([id])));
        const part = parts.get(id)!;
        expect([...part.files.keys()].sort(), `dashboard ${id}`).toEqual([...alone.files.keys()].sort());
        expect(part.contentHash(), `dashboard ${id}`).toBe(alone.contentHash());
      }
      // And the parts put together hold every file of the joint export once.
      const joint = Bundle.fromZip(new Uint8Array(await c.exportDashboards(ids)));
      expect([...mergeBundles([...parts.values()]).files.keys()].sort()).toEqual([...joint.files.keys()].sort());
      c.close();
    });
  }
});
