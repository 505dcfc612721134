import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CompanionKindName } from '../../contracts/companions.ts';
import { waitTask } from '../dashboard-migration/support.ts';
import { expectListedViewsAsRead } from '../dashboard-migration/views-compare.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDatabase, login, type SupersetClient } from '../support/superset/fixtures.ts';
import { REPO_ROOT } from '../support/superset/instance.ts';
import type { TestSupersetInfo } from '../support/superset/test-instances.ts';
import { checkKinds, datasetReadsProd, get, kindOf, list, releaseHas } from './companion-checks.ts';
import {
  buildCompanionSource,
  DEV_APP,
  DEV_SCHEMA,
  dropDatabases,
  PROD_APP,
  PROD_SCHEMA,
  prepareTarget,
  themeConfig,
  warehouse,
  type CompanionSource,
} from './companion-fixture.ts';
import { renderCompanions, type CompanionPairResult, type ScenarioCheck } from './render-companions.ts';
import { writeCompanionSection } from './render.ts';

/**
 * Companions, themes and embedded configs across releases (issues 31 and 36): the fixture of
 * ./companion-fixture.ts built on every release of the matrix and migrated in both directions
 * between the newest release and each older one, every kind read back from the target
 * (./companion-checks.ts), a rerun changing nothing. Around the 6.1.0 → 6.0.0 direction (the
 * target on PostgreSQL metadata) the Done-when scenario: strict and ignore before the copy, a
 * theme edited after it, and an owner and a role the target lacks. A complete run writes the
 * companion section of docs/version-matrix.md.
 */
const instances = (inject('supersets') ?? {}) as unknown as Record<string, TestSupersetInfo>;
const byVersion = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
const releases = Object.keys(instances).sort(byVersion);
const NEWEST = releases.at(-1)!;
const pairs = releases.filter((r) => r !== NEWEST).flatMap((r) => [[NEWEST, r] as const, [r, NEWEST] as const]);
const [SRC, TGT] = ['6.1.0', '6.0.0'];
const scenarioOn = releases.includes(SRC) && releases.includes(TGT);
const stamp = `c${Date.now().toString(36).slice(-5)}`;
const started = Date.now();

let h: Harness;
const clients: Record<string, SupersetClient> = {};
const envs: Record<string, string> = {};
const prodDb: Record<string, { id: number }> = {};
const sources: Record<string, CompanionSource> = {};
const pgDatabases: string[] = [];
const results = new Map<string, CompanionPairResult>();
const scenario: ScenarioCheck[] = [];

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
const key = (s: string, t: string) => `${s}>${t}`;

async function migrate(s: string, t: string, ids: number[], extra: Record<string, unknown> = {}) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envs[s], target_env_id: envs[t], dashboard_ids: ids, ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return waitTask(h, r.body.task_id, 300_000);
}
const why = (task: any) => JSON.stringify(task?.result?.items?.map((i: any) => [i.status, i.step, i.error]) ?? task?.error);
/** What a rerun still did: every item that is not unchanged or the target's own. */
const acted = (o: any) =>
  o.companions.flatMap((k: any) =>
    k.items
      .filter((i: any) => !['unchanged', 'only_in_target'].includes(i.action) && !(k.available === false && i.action === 'missing'))
      .map((i: any) => [k.kind, i.name, i.action]),
  );

/** A scenario check recorded for the doc, then asserted. */
async function step(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    scenario.push({ name, ok: true });
  } catch (err) {
    scenario.push({ name, ok: false, detail: (err as Error).message.split('\n')[0] });
    throw err;
  }
}

beforeAll(async () => {
  if (!releases.length) return;
  h = await createHarness({ worker: true });
  const adminUrl = inject('pgAdminUrl');
  const devUri = await warehouse(adminUrl, `${stamp}_dev`, DEV_SCHEMA);
  const prodUri = await warehouse(adminUrl, `${stamp}_prod`, PROD_SCHEMA);
  pgDatabases.push(`${stamp}_dev`, `${stamp}_prod`);
  for (const r of releases) {
    const info = instances[r]!;
    clients[r] = await login(info.baseUrl, info.username, info.password);
    const env = await admin('POST', '/api/environments', {
      json: { name: `companions-${r}-${stamp}`, base_url: info.baseUrl, username: info.username, password: info.password },
    });
    expect(env.status, env.text).toBe(201);
    envs[r] = env.body.id;
    prodDb[r] = await createDatabase(clients[r], { name: `${stamp}_prod`, sqlalchemyUri: prodUri });
    sources[r] = await buildCompanionSource(clients[r], r, `${stamp}v${r.replace(/\D/g, '')}`, devUri, r === SRC);
  }
  for (const [s, t] of pairs) {
    await prepareTarget(clients[t]!, sources[s]!, t.replace(/\D/g, ''));
    const m = await admin('PUT', `/api/environments/${envs[s]}/db-mappings/${envs[t]}`, {
      json: { mappings: [{ source_database_id: sources[s]!.dev.id, target_database_id: prodDb[t]!.id }] },
    });
    expect(m.status, m.text).toBe(200);
    for (const rule of [
      { kind: 'schema', from: DEV_SCHEMA, to: PROD_SCHEMA },
      { kind: 'text', from: DEV_APP, to: PROD_APP },
    ]) {
      const r = await admin('POST', `/api/environments/${envs[s]}/rules/${envs[t]}`, { json: rule });
      expect(r.status, r.text).toBe(201);
    }
  }
}, 900_000);

afterAll(async () => {
  await h?.close();
  for (const c of Object.values(clients)) c.close();
  await dropDatabases(inject('pgAdminUrl'), pgDatabases);
  if (!releases.length || results.size < pairs.length || (scenarioOn && scenario.length < 6)) return; // a partial run writes nothing
  const markdown = renderCompanions({
    releases: releases.map((r) => ({ release: r, metadata: instances[r]!.metadata, has: (k: CompanionKindName) => releaseHas(r, k) })),
    pairs: pairs.map(([s, t]) => results.get(key(s, t))!),
    scenario,
    seconds: (Date.now() - started) / 1000,
    date: new Date().toISOString().slice(0, 10),
  });
  writeCompanionSection(REPO_ROOT, markdown);
});

describe.runIf(releases.length)('companion views read from the export and lists (companions/views-listed.ts)', () => {
  it.each(releases)('%s: the same views as read one dashboard at a time, with no read per dashboard', async (r) => {
    const src = sources[r]!;
    await expectListedViewsAsRead(instances[r]!, [src.dashboard.id, ...(src.ghost ? [src.ghost.id] : [])]);
  });
});

describe.runIf(scenarioOn)(`Done-when, before the copy: ${SRC} → ${TGT} (PostgreSQL metadata)`, () => {
  it('strict (the roles default) plans a dashboard restricted to a role the target has; ignore records the kinds and writes none', async () => {
    const src = sources[SRC]!;
    const t = clients[TGT]!;
    await step('roles strict by default: the target has the role, so a dry run plans the dashboard restricted to it', async () => {
      const [o] = (await migrate(SRC, TGT, [src.dashboard.id], { dry_run: true })).result.items;
      expect(o.status, JSON.stringify(o.next_actions)).toBe('planned');
      expect(kindOf(o, 'roles')).toMatchObject({ mode: 'strict', items: [expect.objectContaining({ name: src.names.viewers })] });
    });
    await step('a dry run with roles copy plans every kind and writes nothing', async () => {
      const [p] = (await migrate(SRC, TGT, [src.dashboard.id], { dry_run: true, companions: { roles: 'copy' } })).result.items;
      expect(p.status).toBe('planned');
      for (const k of ['owners', 'roles', 'tags', 'reports', 'annotation_layers', 'css_templates', 'saved_queries', 'themes', 'embedded'])
        expect(
          kindOf(p, k).items.some((i: any) => i.action === 'create'),
          k,
        ).toBe(true);
      expect((await list(t, '/api/v1/report/')).filter((r: any) => r.name.startsWith(src.prefix))).toEqual([]);
    });
    await step('ignore: reports, roles and layers compared, reported ignored_by_request, none written', async () => {
      const task = await migrate(SRC, TGT, [src.dashboard.id], {
        companions: { roles: 'ignore', reports: 'ignore', annotation_layers: 'ignore' },
      });
      expect(task.status, why(task)).toBe('SUCCEEDED');
      const [o] = task.result.items;
      expect(o.status, why(task)).toBe('imported');
      expect(o.verification, why(task)).toMatchObject({ ok: true, charts_expected: 2 });
      for (const k of ['roles', 'reports', 'annotation_layers'])
        expect(kindOf(o, k)).toMatchObject({ mode: 'ignore', ignored_by_request: true });
      expect((await list(t, '/api/v1/report/')).filter((r: any) => r.name.startsWith(src.prefix))).toEqual([]);
      expect((await list(t, '/api/v1/annotation_layer/')).filter((l: any) => l.name === src.names.layer)).toEqual([]);
      expect((await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`)).roles).toEqual([]);
    });
  }, 900_000);
});

describe.skipIf(!releases.length)('companion kinds in both directions between the newest release and each older one', () => {
  it.each(pairs)('%s → %s: every kind arrives or is named as what the release lacks; a rerun changes nothing', async (s, t) => {
    const res: CompanionPairResult = {
      source: s,
      target: t,
      ok: false,
      dataset: 'not reached',
      kinds: {},
      rerun: 'not reached',
      seconds: 0,
    };
    results.set(key(s, t), res);
    const t0 = Date.now();
    const src = sources[s]!;
    try {
      const task = await migrate(s, t, [src.dashboard.id], { companions: { roles: 'copy' } });
      expect(task.status, why(task)).toBe('SUCCEEDED');
      const [o] = task.result.items;
      // Imported, or (6.1.0 → 6.0.0, after the ignore run) unchanged with its companions written.
      expect(['imported', 'unchanged'], why(task)).toContain(o.status);
      if (o.status === 'imported') expect(o.verification, why(task)).toMatchObject({ ok: true, charts_expected: 2 });
      await datasetReadsProd(clients[t]!, src);
      res.dataset = `✅ reads ${PROD_SCHEMA}`;
      res.kinds = await checkKinds({ t: clients[t]!, src, o, prodDbId: prodDb[t]!.id });
      const again = await migrate(s, t, [src.dashboard.id], { companions: { roles: 'copy' } });
      const [r] = again.result.items;
      res.rerun = r.status === 'unchanged' && !acted(r).length ? '✅ unchanged' : `❌ ${r.status}: ${JSON.stringify(acted(r))}`;
      expect(r.status, why(again)).toBe('unchanged');
      expect(acted(r)).toEqual([]);
      expect(Object.entries(res.kinds).filter(([, c]) => c.startsWith('❌'))).toEqual([]);
      res.ok = true;
    } catch (err) {
      res.reason = (err as Error).message.split('\n')[0];
      throw err;
    } finally {
      res.seconds = (Date.now() - t0) / 1000;
    }
  });
});

describe.runIf(scenarioOn)(`Done-when, after the copy: ${SRC} → ${TGT}`, () => {
  it('a theme edited in the source arrives with the next migration, the embedded uuid stays; a rerun changes nothing', async () => {
    const src = sources[SRC]!;
    const t = clients[TGT]!;
    await step("the theme's later edit arrives; the embedded config keeps its target uuid; a rerun is unchanged", async () => {
      await clients[SRC]!.request('PUT', `/api/v1/theme/${src.theme!.id}`, {
        json: { theme_name: src.names.theme, json_data: themeConfig('#445566') },
      });
      const task = await migrate(SRC, TGT, [src.dashboard.id], { companions: { roles: 'copy' } });
      expect(task.status, why(task)).toBe('SUCCEEDED');
      const [o] = task.result.items;
      expect(kindOf(o, 'themes').items).toEqual([expect.objectContaining({ action: 'update', fields: ['json_data'], done: true })]);
      const theirs = (await get(t, `/api/v1/dashboard/${o.target_dashboard_id}`)).theme;
      expect(JSON.parse((await get(t, `/api/v1/theme/${theirs.id}`)).json_data).token.colorPrimary).toBe('#445566');
      const emb = kindOf(o, 'embedded').items[0];
      expect(emb).toMatchObject({ action: 'unchanged', source_uuid: src.embeddedUuid });
      expect((await get(t, `/api/v1/dashboard/${o.target_dashboard_id}/embedded`)).uuid).toBe(emb.target_uuid);
      const [r] = (await migrate(SRC, TGT, [src.dashboard.id], { companions: { roles: 'copy' } })).result.items;
      expect(r.status).toBe('unchanged');
      expect(acted(r)).toEqual([]);
    });
  }, 900_000);

  it('an owner and a role the target lacks: strict fails with create_user; copy imports and names both with their next actions', async () => {
    const src = sources[SRC]!;
    await step('an owner the target lacks fails the dashboard under strict (create_user)', async () => {
      const [s] = (await migrate(SRC, TGT, [src.ghost!.id], { companions: { owners: 'strict', roles: 'copy' } })).result.items;
      expect(s).toMatchObject({ status: 'failed', step: 'companions', code: 'companions_mismatch' });
      expect(kindOf(s, 'owners').items).toContainEqual(expect.objectContaining({ name: src.names.ghost, action: 'missing' }));
      expect(s.next_actions.map((n: any) => n.action)).toContain('create_user');
    });
    await step('under copy the dashboard is imported and the owner and role are named missing (create_user, create_role)', async () => {
      const task = await migrate(SRC, TGT, [src.ghost!.id], { companions: { roles: 'copy' } });
      const [o] = task.result.items;
      expect(o.status, why(task)).toBe('imported');
      expect(kindOf(o, 'owners').items).toContainEqual(expect.objectContaining({ name: src.names.ghost, action: 'missing' }));
      expect(kindOf(o, 'roles').items).toEqual([
        expect.objectContaining({
          name: src.names.onlyHere,
          action: 'missing',
          next_action: expect.objectContaining({ action: 'create_role' }),
        }),
      ]);
      expect(o.next_actions.map((n: any) => n.action)).toEqual(expect.arrayContaining(['create_user', 'create_role']));
      expect((await get(clients[TGT]!, `/api/v1/dashboard/${o.target_dashboard_id}`)).roles).toEqual([]);
    });
  }, 900_000);
});
