// Why the fake: (part) a release without themes (404 on the theme API); the rest runs on real Superset.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { companionContext } from '../../domain/migration/companions/context.ts';
import { mapDomains } from '../../domain/migration/companions/embedded.ts';
import { themes } from '../../domain/migration/companions/themes.ts';
import { checkCompanions } from '../../domain/migration/companions/step.ts';
import type { CompanionScope } from '../../domain/migration/companions/scope.ts';
import type { Log, Request } from '../../domain/migration/context.ts';
import { SupersetClient as LibClient } from '../../lib/superset/client.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createSqliteDatabase, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from './support.ts';

/**
 * A dashboard's theme and embedded configuration across migrations, through the API against real
 * Superset a (6.1.0) → c (6.0.0). Superset's dashboard import carries the theme once and never
 * overwrites it, and no export carries the embedded configuration: both are companion kinds. Into
 * a release without themes (4.1, 5.0) a fake Superset stands in, answering 404 on the theme API as
 * those releases do (starting the matrix's 5.0.0 from this file is too heavy for the shared machine).
 */
const enabled = inject('supersets') !== null;
const P = `t${Date.now().toString(36)}`;
const DEV_APP = 'https://app-dev.example.com';
const PROD_APP = 'https://app.example.com';
const OTHER = 'https://partner.example.org';

let h: Harness;
let a: SupersetClient;
let c: SupersetClient;
let envA: string;
let envC: string;
let src: SourceFixture;
let themeId: number;
let themeUuid: string;
let sourceEmbedded: string;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
const get = async <T = any>(s: SupersetClient, p: string): Promise<T> => (await s.request<{ result: T }>('GET', p)).result;
const kind = (o: any, name: string): any => o.companions.find((k: any) => k.kind === name);
const config = (color: string) => JSON.stringify({ token: { colorPrimary: color, borderRadius: 4 } });

async function migrate(): Promise<any> {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envA, target_env_id: envC, dashboard_ids: [src.dashboards[0]!.id] },
  });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 300_000);
  expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => [i.error, i.companions]))).toBe('SUCCEEDED');
  return task.result.items[0];
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, c] = await Promise.all([client('a'), client('c')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 1 });
  const dashId = src.dashboards[0]!.id;
  const created = await a.request<{ id: number }>('POST', '/api/v1/theme/', {
    json: { theme_name: `${P} brand`, json_data: config('#112233') },
  });
  themeId = created.id;
  themeUuid = (await get(a, `/api/v1/theme/${themeId}`)).uuid;
  await a.request('PUT', `/api/v1/dashboard/${dashId}`, { json: { theme_id: themeId } });
  sourceEmbedded = (
    await a.request<{ result: { uuid: string } }>('PUT', `/api/v1/dashboard/${dashId}/embedded`, {
      json: { allowed_domains: [DEV_APP, OTHER] },
    })
  ).result.uuid;

  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envC = await registerEnvironment(h, 'c', `${P}-c`);
  const target = await createSqliteDatabase(c, { name: `${P}_warehouse`, path: path.join(dir, `${P}-c.db`), tables: prefixedTables(P) });
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envC}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: target.id }] },
  });
  expect(m.status, m.text).toBe(200);
  const rule = await admin('POST', `/api/environments/${envA}/rules/${envC}`, { json: { kind: 'text', from: DEV_APP, to: PROD_APP } });
  expect(rule.status, rule.text).toBe(201);
}, 300_000);
afterAll(async () => h?.close());

describe.runIf(enabled)('themes and embedded configs a (6.1.0) → c (6.0.0)', () => {
  it("carries the theme, then its later edit; creates the embedded config with prod's domains and lists its new uuid; a rerun changes nothing", async () => {
    const first = await migrate();
    expect(first.status).toBe('imported');
    const target = first.target_dashboard_id as number;
    const theirTheme = (await get<any>(c, `/api/v1/dashboard/${target}`)).theme;
    expect(theirTheme).toMatchObject({ theme_name: `${P} brand` });
    expect((await get(c, `/api/v1/theme/${theirTheme.id}`)).uuid).toBe(themeUuid);
    const emb = await get<any>(c, `/api/v1/dashboard/${target}/embedded`);
    expect(emb.allowed_domains.sort()).toEqual([PROD_APP, OTHER].sort());
    expect(kind(first, 'embedded').items).toEqual([
      expect.objectContaining({ name: 'embedded', source_uuid: sourceEmbedded, target_uuid: emb.uuid }),
    ]);
    expect(emb.uuid).not.toBe(sourceEmbedded);

    // An edit in the source after the first migration: Superset's import alone would keep the old theme.
    await a.request('PUT', `/api/v1/theme/${themeId}`, { json: { theme_name: `${P} brand`, json_data: config('#445566') } });
    const second = await migrate();
    expect(JSON.parse((await get(c, `/api/v1/theme/${theirTheme.id}`)).json_data).token.colorPrimary).toBe('#445566');
    expect(kind(second, 'themes').items).toEqual([
      expect.objectContaining({ name: `${P} brand`, action: 'update', fields: ['json_data'], done: true }),
    ]);
    expect(kind(second, 'embedded').items).toEqual([expect.objectContaining({ action: 'unchanged', target_uuid: emb.uuid })]);

    const third = await migrate();
    expect(third.status).toBe('unchanged');
    for (const k of ['themes', 'embedded'])
      expect(kind(third, k).items).toEqual([expect.objectContaining({ action: 'unchanged', done: false })]);
    expect(kind(third, 'embedded').items[0]).toMatchObject({ source_uuid: sourceEmbedded, target_uuid: emb.uuid });
    expect((await get<any>(c, `/api/v1/dashboard/${target}/embedded`)).uuid).toBe(emb.uuid);
  }, 900_000);

  it('into a release without themes (its theme API answers 404): the theme is named as dropped, with a next action, not failed', async () => {
    let fake: FakeSuperset | undefined;
    try {
      fake = await startFakeSuperset();
      const target = new LibClient({ baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
      const ctx = companionContext({
        source: a,
        target,
        sourceDashboardId: src.dashboards[0]!.id,
        dashboardUuid: src.dashboards[0]!.uuid!,
        title: 'x',
        datasetUuids: new Map(),
        mappings: new Map(),
        pauseReports: true,
        activity: {},
      });
      const r = await themes.run(ctx, true);
      expect(r.unavailable).toMatch(/no themes/);
      expect(r.items).toEqual([
        expect.objectContaining({
          name: `${P} brand`,
          action: 'missing',
          done: false,
          next_action: expect.objectContaining({ action: 'upgrade_target_superset' }),
        }),
      ]);
      expect(r.items[0]!.note).toMatch(/^dropped/);
      // Even with themes strict, a release without them drops the theme with the next action instead of failing the dashboard.
      const input = { sourceEnvId: 'dev', targetEnvId: 'old', companions: { themes: 'strict' } } as unknown as Request;
      const logged: string[] = [];
      const log = {
        info: (m: string) => logged.push(m),
        warn: (m: string) => logged.push(m),
        error: (m: string) => logged.push(m),
      } as unknown as Log;
      const check = await checkCompanions(
        { svc: { deps: {} } as CompanionScope['svc'], input, mappings: new Map(), log, clients: { source: a, target } },
        src.dashboards[0]!.id,
        {
          dashboardUuid: src.dashboards[0]!.uuid!,
          title: 'x',
          datasets: [],
        },
      );
      expect(check.blocked).toBeUndefined();
      expect(check.reports.find((k) => k.kind === 'themes')).toMatchObject({
        mode: 'strict',
        available: false,
        items: [expect.objectContaining({ action: 'missing' })],
      });
      expect(check.next_actions.map((n) => n.action)).toContain('upgrade_target_superset');
      expect(fake.requests.some((q) => q.method === 'GET' && q.path.startsWith('/api/v1/theme/'))).toBe(true);
      target.close();
    } finally {
      await fake?.close();
    }
  }, 120_000);

  it('a backup keeps the theme and the embedded config; a restore puts back an edited theme and a deleted embedded config', async () => {
    const dashId = src.dashboards[0]!.id;
    const kept = JSON.parse((await get(a, `/api/v1/theme/${themeId}`)).json_data).token.colorPrimary;
    const b = await admin('POST', '/api/dashboards/backup', { json: { env_id: envA, dashboard_ids: [dashId] } });
    expect(b.status, b.text).toBe(202);
    const backup = await waitTask(h, b.body.task_id, 300_000);
    expect(backup.status, JSON.stringify(backup.result?.items)).toBe('SUCCEEDED');

    // Someone changes the theme and removes the embedded configuration in Superset afterwards.
    await a.request('PUT', `/api/v1/theme/${themeId}`, { json: { theme_name: `${P} brand`, json_data: config('#000000') } });
    await a.request('DELETE', `/api/v1/dashboard/${dashId}/embedded`);
    await expect(a.request('GET', `/api/v1/dashboard/${dashId}/embedded`)).rejects.toThrow(/404/);

    const r = await admin('POST', `/api/dashboards/backups/${backup.result.items[0].backup_id}/restore`, { json: {} });
    expect(r.status, r.text).toBe(202);
    const restore = await waitTask(h, r.body.task_id, 300_000);
    expect(restore.status, JSON.stringify(restore.result?.items)).toBe('SUCCEEDED');
    const [o] = restore.result.items;
    expect(kind(o, 'themes').items).toEqual([expect.objectContaining({ name: `${P} brand`, action: 'update', done: true })]);
    expect(kind(o, 'embedded').items).toEqual([expect.objectContaining({ action: 'create', done: true })]);
    expect(JSON.parse((await get(a, `/api/v1/theme/${themeId}`)).json_data).token.colorPrimary).toBe(kept);
    // Its own environment: the domains as they were (no pair rule applies), under the uuid Superset assigns now.
    const emb = await get<any>(a, `/api/v1/dashboard/${dashId}/embedded`);
    expect(emb.allowed_domains.sort()).toEqual([DEV_APP, OTHER].sort());
    expect(kind(o, 'embedded').items[0]).toMatchObject({ source_uuid: sourceEmbedded, target_uuid: emb.uuid });
  }, 900_000);
});

describe('embedded allowed_domains through the pair rules', () => {
  it("maps dev's host app to prod's by origin, never a look-alike host, and keeps the rest as written", () => {
    const rules = [{ id: 'r1', kind: 'text' as const, from: DEV_APP, to: PROD_APP }];
    expect(mapDomains([DEV_APP, `${DEV_APP}.evil.io`, OTHER, `${DEV_APP}/`], rules)).toEqual([
      PROD_APP,
      `${DEV_APP}.evil.io`,
      OTHER,
      `${PROD_APP}/`,
    ]);
    expect(mapDomains([DEV_APP], [{ id: 'r2', kind: 'schema', from: DEV_APP, to: PROD_APP }])).toEqual([DEV_APP]);
  });
});
