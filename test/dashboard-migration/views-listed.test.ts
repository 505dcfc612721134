import path from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createUser, userIdOf, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildSource, client, superset, type SourceFixture } from './support.ts';
import { expectListedViewsAsRead } from './views-compare.ts';

/**
 * The companions' views read from the environment's export and three list reads
 * (companions/views-listed.ts) are the views read one dashboard at a time (its detail and chart
 * list), on real Superset 6.1.0: owners, roles, tags, certification, CSS and theme of the
 * dashboards; each chart's meta and Superset's own form_data, which the chart checks build on.
 * The matrix makes the same comparison on every release (test/matrix/companions.matrix.test.ts).
 */
const enabled = inject('supersets') !== null;
const P = `vl${Date.now().toString(36)}`;

let a: SupersetClient;
let src: SourceFixture;
let themeUuid: string;

beforeAll(async () => {
  if (!enabled) return;
  a = await client('a');
  src = await buildSource(a, P, path.join(inject('runDir'), P), { dashboards: 3 });
  const [first, second] = src.dashboards;
  const ann = await createUser(a, { username: `${P}ann`, password: 'ann-pw', firstName: 'Ann', lastName: 'Analyst', roles: ['Gamma'] });
  const role = (await a.request<{ id: number }>('POST', '/api/v1/security/roles/', { json: { name: `${P} viewers` } })).id;
  await a.request('PUT', `/api/v1/dashboard/${first!.id}`, {
    json: {
      owners: [await userIdOf(a, 'admin'), ann.id],
      roles: [role],
      css: '.header { color: teal; }',
      certified_by: 'Data team',
      certification_details: 'checked weekly',
    },
  });
  await a.request('PUT', `/api/v1/chart/${first!.chartIds[0]}`, { json: { certified_by: 'Data team', owners: [ann.id] } });
  await a.request('POST', '/api/v1/tag/', {
    json: {
      name: `${P} finance`,
      objects_to_tag: [
        ['dashboard', first!.id],
        ['chart', first!.chartIds[1]],
      ],
    },
  });
  const theme = await a.request<{ id: number }>('POST', '/api/v1/theme/', {
    json: { theme_name: `${P} brand`, json_data: JSON.stringify({ token: { colorPrimary: '#112233' } }) },
  });
  themeUuid = (await a.request<{ result: { uuid: string } }>('GET', `/api/v1/theme/${theme.id}`)).result.uuid;
  await a.request('PUT', `/api/v1/dashboard/${second!.id}`, { json: { theme_id: theme.id } });
}, 300_000);

describe.skipIf(!enabled)('companion views read from the export and lists', () => {
  it('are the views read one dashboard at a time, with no read per dashboard', async () => {
    const ids = src.dashboards.map((d) => d.id);
    const listed = await expectListedViewsAsRead(superset('a'), ids);
    const first = listed.get(ids[0]!)!.dashboard;
    expect(first).toMatchObject({ css: '.header { color: teal; }', certified_by: 'Data team', tags: [`${P} finance`] });
    expect(first.owners).toHaveLength(2);
    expect(first.owners.map((o) => o.first_name)).toContain('Ann');
    expect(first.roles.map((r) => r.name)).toEqual([`${P} viewers`]);
    expect(listed.get(ids[0]!)!.charts.find((c) => c.id === src.dashboards[0]!.chartIds[0])).toMatchObject({ certified_by: 'Data team' });
    expect(listed.get(ids[1]!)!.dashboard.theme_uuid).toBe(themeUuid);
    expect(listed.get(ids[2]!)!.dashboard.theme_uuid).toBeNull();
  }, 120_000);
});
