/**
 * What a target must hold after the companion fixture (./companion-fixture.ts) migrated into it,
 * read back from the target Superset kind by kind. Each check throws with what is wrong; the
 * matrix test turns each into its kind's cell. A kind the target's release lacks must come back
 * `available: false` with the companion named as dropped and a next action, never failed.
 */
import { expect } from 'vitest';
import { COMPANION_KINDS, type CompanionKindName } from '../../contracts/companions.ts';
import { userIdOf, type SupersetClient } from '../support/superset/fixtures.ts';
import { hasThemes, PARTNER, PROD_APP, PROD_SCHEMA, DEV_SCHEMA, type CompanionSource } from './companion-fixture.ts';

export const get = async <T = any>(s: SupersetClient, p: string, q?: unknown): Promise<T> =>
  (await s.request<{ result: T }>('GET', p, q ? { q } : {})).result;
export const list = <T = any>(s: SupersetClient, p: string) => get<T[]>(s, p, { page_size: 100 });
export const kindOf = (o: any, name: string): any => o.companions.find((k: any) => k.kind === name);

/** The target's chart of that name on the dashboard, with its params (4.1 lists no uuid on a chart's detail). */
async function chartNamed(t: SupersetClient, dashboardId: number, name: string): Promise<any> {
  const found = (await get<any[]>(t, `/api/v1/dashboard/${dashboardId}/charts`)).find((c) => c.slice_name === name);
  if (!found) throw new Error(`no chart '${name}' on dashboard ${dashboardId}`);
  return get(t, `/api/v1/chart/${found.id}`);
}

export interface Landed {
  t: SupersetClient;
  src: CompanionSource;
  /** The dashboard's outcome of the copy migration. */
  o: any;
  /** The target's database the source's was mapped to. */
  prodDbId: number;
}

type Check = (l: Landed) => Promise<string>;

/** Every kind all written (nothing refused, nothing missing) in the outcome: how many items it carried. */
function written(o: any, name: CompanionKindName): string {
  const k = kindOf(o, name);
  expect(k, `${name} reported`).toBeDefined();
  expect(k.available, `${name}: ${k.unavailable}`).toBe(true);
  const bad = k.items.filter(
    (i: any) => i.error || i.action === 'missing' || ((i.action === 'create' || i.action === 'update') && !i.done),
  );
  expect(bad, `${name} not written`).toEqual([]);
  return `${k.items.length} item(s)`;
}

export const CHECKS: Record<CompanionKindName, Check> = {
  async owners({ t, src, o }) {
    const there = await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`);
    expect(there.owners.map((x: any) => x.id)).toEqual(
      expect.arrayContaining([await userIdOf(t, src.names.ann), await userIdOf(t, 'admin')]),
    );
    return written(o, 'owners');
  },
  async roles({ t, src, o }) {
    expect((await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`)).roles.map((x: any) => x.name)).toEqual([src.names.viewers]);
    return written(o, 'roles');
  },
  async tags({ t, src, o }) {
    const there = await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`);
    expect(there.tags.map((x: any) => x.name)).toEqual(expect.arrayContaining(src.names.tags));
    return written(o, 'tags');
  },
  async reports({ t, src, o, prodDbId }) {
    const mine = (await list(t, '/api/v1/report/')).filter((r: any) => r.name.startsWith(src.prefix));
    expect(mine.map((r: any) => r.name).sort()).toEqual([src.names.alert, src.names.weekly].sort());
    const weekly = await get(t, `/api/v1/report/${mine.find((r: any) => r.name === src.names.weekly).id}`);
    expect(weekly).toMatchObject({ type: 'Report', active: false, crontab: '0 9 * * 1', dashboard: { id: o.target_dashboard_id } });
    const alert = await get(t, `/api/v1/report/${mine.find((r: any) => r.name === src.names.alert).id}`);
    const total = await chartNamed(t, o.target_dashboard_id, src.names.total);
    expect(alert).toMatchObject({ type: 'Alert', active: false, chart: { id: total.id }, database: { id: prodDbId } });
    // Its SQL runs on prod's database: the pair's schema rule applies to it as to the dataset's.
    expect(alert.sql).toMatch(new RegExp(`from ${PROD_SCHEMA}\\.orders`, 'i'));
    return written(o, 'reports');
  },
  async annotation_layers({ t, src, o }) {
    const layer = (await list(t, '/api/v1/annotation_layer/')).find((l: any) => l.name === src.names.layer);
    expect(layer, 'the layer in the target').toBeDefined();
    const notes = await list(t, `/api/v1/annotation_layer/${layer.id}/annotation/`);
    expect(notes.map((x: any) => x.short_descr).sort()).toEqual(['v1 launch', 'v2 launch']);
    const rows = await chartNamed(t, o.target_dashboard_id, src.names.rows);
    // Drawn from the target's layer, not whatever has the source's id there.
    expect(JSON.parse(rows.params).annotation_layers).toEqual([expect.objectContaining({ sourceType: 'NATIVE', value: layer.id })]);
    return written(o, 'annotation_layers');
  },
  async css_templates({ t, src, o }) {
    const found = (await list(t, '/api/v1/css_template/')).filter((x: any) => x.template_name === src.names.template);
    expect(found).toEqual([expect.objectContaining({ css: src.names.css })]);
    return written(o, 'css_templates');
  },
  async saved_queries({ t, src, o, prodDbId }) {
    const found = (await list(t, '/api/v1/saved_query/')).filter((q: any) => q.label === src.dataset.name);
    expect(found).toEqual([expect.objectContaining({ db_id: prodDbId, schema: PROD_SCHEMA })]);
    expect(found[0].sql).toMatch(new RegExp(`from ${PROD_SCHEMA}\\.orders`, 'i'));
    return written(o, 'saved_queries');
  },
  async certification({ t, o }) {
    expect(await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`)).toMatchObject({
      certified_by: 'Data team',
      certification_details: 'checked weekly',
    });
    // Every release's bundle carries it: the kind only writes where the import left it different.
    return kindOf(o, 'certification').items.length ? written(o, 'certification') : 'carried by the import';
  },
  async themes({ t, src, o }) {
    const k = kindOf(o, 'themes');
    if (!src.theme) {
      expect(k.items, 'a source release without themes has none to carry').toEqual([]);
      return `— (${src.release} has no themes)`;
    }
    if (!k.available) {
      // A target release without themes: the theme named as dropped, with what to do, the dashboard imported.
      expect(k.items).toEqual([
        expect.objectContaining({
          name: src.names.theme,
          action: 'missing',
          next_action: expect.objectContaining({ action: 'upgrade_target_superset' }),
        }),
      ]);
      expect(k.items[0].note).toMatch(/^dropped/);
      expect(o.next_actions.map((n: any) => n.action)).toContain('upgrade_target_superset');
      return 'dropped, named (no themes in the target)';
    }
    const there = (await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`)).theme;
    expect((await get(t, `/api/v1/theme/${there.id}`)).uuid).toBe(src.theme.uuid);
    return written(o, 'themes');
  },
  async embedded({ t, src, o }) {
    const emb = await get<any>(t, `/api/v1/dashboard/${o.target_dashboard_id}/embedded`);
    expect(emb.allowed_domains.sort()).toEqual([PROD_APP, PARTNER].sort());
    expect(emb.uuid).not.toBe(src.embeddedUuid);
    expect(kindOf(o, 'embedded').items).toEqual([expect.objectContaining({ source_uuid: src.embeddedUuid, target_uuid: emb.uuid })]);
    return written(o, 'embedded');
  },
};

/** The virtual dataset reads prod's schema in the target (the pair's schema rule), and its charts ran there. */
export async function datasetReadsProd(t: SupersetClient, src: CompanionSource): Promise<void> {
  const found = await t.request<{ result: Array<{ id: number }> }>('GET', '/api/v1/dataset/', {
    q: { filters: [{ col: 'table_name', opr: 'eq', value: src.dataset.name }], columns: ['id'] },
  });
  expect(found.result).toHaveLength(1);
  const ds = await get<any>(t, `/api/v1/dataset/${found.result[0]!.id}`);
  expect(ds.schema).toBe(PROD_SCHEMA);
  expect(ds.sql).toMatch(new RegExp(`from ${PROD_SCHEMA}\\.orders`, 'i'));
  expect(ds.sql).not.toContain(DEV_SCHEMA);
}

/** Per kind, what the target holds checked: the cell text, or `❌ reason`. */
export async function checkKinds(l: Landed): Promise<Record<CompanionKindName, string>> {
  const cells = {} as Record<CompanionKindName, string>;
  for (const k of COMPANION_KINDS) {
    try {
      cells[k] = `✅ ${await CHECKS[k](l)}`;
      if (cells[k].startsWith('✅ —') || cells[k].startsWith('✅ dropped')) cells[k] = cells[k].slice(2);
    } catch (err) {
      cells[k] = `❌ ${(err as Error).message.split('\n')[0]}`;
    }
  }
  return cells;
}

/** What the release offers of a kind, for the doc's per-release line. */
export function releaseHas(release: string, kind: CompanionKindName): boolean {
  return kind !== 'themes' || hasThemes(release);
}
