// Why the fake: lists without uuid, as releases before 4.1.4 answer (no such release runs here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readViews } from '../../domain/migration/companions/views.ts';
import { Bundle } from '../../lib/bundles/bundle.ts';
import { splitByDashboard } from '../../lib/bundles/split.ts';
import { SupersetClient } from '../../lib/superset/client.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

/**
 * The companions' views read from an export and list reads (companions/views-listed.ts) where
 * the lists give no uuid (the fake answers as a release whose lists leave it out): a chart's
 * uuid pairs it with its copy, so each chart is read on its own and keeps its uuid.
 */
let fake: FakeSuperset;
let client: SupersetClient;
const ids: number[] = [];

beforeAll(async () => {
  fake = await startFakeSuperset({ version: '4.1.0', listsWithoutUuid: true });
  const db = fake.addDatabase({ name: 'analytics' });
  const sales = fake.addDataset({ table: 'sales', database: db.id });
  for (const i of [1, 2]) {
    const d = fake.addDashboard({ title: `Uuidless ${i}`, slug: `uuidless-${i}` });
    fake.addChart({ name: `Uuidless rows ${i}`, dataset: sales.id, dashboards: [d.id] });
    ids.push(d.id);
  }
  client = new SupersetClient({ baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
});
afterAll(async () => {
  client?.close();
  await fake?.close();
});

describe('companion views from an export, lists without uuids', () => {
  it("read each chart's detail, which gives its uuid, instead of keeping the uuid-less list row", async () => {
    const bundles = splitByDashboard(Bundle.fromZip(await client.dashboards.export(ids)));
    const views = await readViews(client, ids, new Map(), new Map(), (id) => bundles.get(id));
    for (const id of ids) {
      const view = views.get(id)!;
      const charts = fake.dashboards.find((d) => d.id === id)!.chartIds.map((c) => fake.charts.find((x) => x.id === c)!);
      expect(view.charts.map((c) => c.uuid)).toEqual(charts.map((c) => c.uuid));
    }
  });
});
