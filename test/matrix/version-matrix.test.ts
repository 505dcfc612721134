import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildSource, prefixedTables, waitTask, type SourceFixture } from '../dashboard-migration/support.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDashboard, createSqliteDatabase, getDashboard, listAll, login, type SupersetClient } from '../support/superset/fixtures.ts';
import { REPO_ROOT } from '../support/superset/instance.ts';
import type { TestSupersetInfo } from '../support/superset/test-instances.ts';
import { renderMatrix, writeMatrix, type PairResult, type ReadResult } from './render.ts';

/**
 * The version matrix: the fixture dashboards of each release migrated to every other release
 * (dry run, migration with verification, hijack traps, re-run), and the read side against each.
 * Every pair and every release records its result, red ones with the reason; a complete run
 * writes docs/version-matrix.md and the matrix section of docs/superset-releases.md.
 */
const instances = (inject('supersets') ?? {}) as unknown as Record<string, TestSupersetInfo>;
const byVersion = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
const releases = Object.keys(instances).sort(byVersion);
const pairs = releases.flatMap((s) => releases.filter((t) => t !== s).map((t) => [s, t] as const));
const started = Date.now();
const stamp = Date.now().toString(36).slice(-4);

let h: Harness;
const clients: Record<string, SupersetClient> = {};
const envs: Record<string, string> = {};
const prefixes: Record<string, string> = {};
const sources: Record<string, SourceFixture> = {};
/** Per pair, what the target holds before the migration: the mapped database, the bait and the slug owner. */
const traps = new Map<
  string,
  { targetDb: { id: number; uuid?: string }; bait: { id: number; uuid?: string }; slugOwner: { id: number; title: string } }
>();
const pairResults = new Map<string, PairResult>();
const readResults = new Map<string, ReadResult>();

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
const key = (s: string, t: string) => `${s}>${t}`;

async function migrate(s: string, t: string, extra: Record<string, unknown> = {}) {
  const r = await admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: envs[s], target_env_id: envs[t], dashboard_ids: sources[s].dashboards.map((d) => d.id), ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return waitTask(h, r.body.task_id, 240_000);
}

/** What went wrong with a task, in the words of its first failed dashboard: error, step and next action. */
function whyFailed(task: any): string {
  const item = task?.result?.items?.find((i: any) => i.status !== 'imported' && i.status !== 'planned' && i.status !== 'skipped');
  if (!item) return task?.error?.message ?? `task ended ${task?.status}`;
  const verification = item.verification?.charts?.find((c: any) => !c.ok);
  const what = item.error ?? (verification ? `chart '${verification.name}' does not run: ${verification.error}` : item.status);
  const next = item.next_actions?.[0]?.description;
  return `${item.step ? `${item.step}: ` : ''}${what}${next ? `. Next: ${next}` : ''}`;
}

const fieldsOf = (list: Array<{ kind: string; field: string }>) => [...new Set(list.map((f) => `${f.kind}s:${f.field}`))].sort();

beforeAll(async () => {
  if (!releases.length) return;
  h = await createHarness({ worker: true });
  const dir = path.join(inject('runDir'), 'matrix');
  for (const r of releases) {
    const info = instances[r];
    clients[r] = await login(info.baseUrl, info.username, info.password);
    prefixes[r] = `v${r.replace(/\D/g, '')}${stamp}`;
    const env = await admin('POST', '/api/environments', {
      json: { name: `matrix-${r}`, base_url: info.baseUrl, username: info.username, password: info.password },
    });
    expect(env.status, env.text).toBe(201);
    envs[r] = env.body.id;
    sources[r] = await buildSource(clients[r], prefixes[r], dir, { dashboards: 1 });
  }
  for (const [s, t] of pairs) {
    const p = prefixes[s];
    const cl = clients[t];
    const targetDb = await createSqliteDatabase(cl, {
      name: `${p}_warehouse`,
      path: path.join(dir, `${p}-${t}.db`),
      tables: prefixedTables(p),
    });
    // Same name as the source's database: Superset's own import would take it over.
    const bait = await createSqliteDatabase(cl, { name: `${p}_src`, path: path.join(dir, `${p}-${t}-bait.db`), tables: prefixedTables(p) });
    const title = `${p} owned by ${t}`;
    const owner = await createDashboard(cl, { title, slug: sources[s].dashboards[0].slug });
    traps.set(key(s, t), { targetDb, bait, slugOwner: { id: owner.id, title } });
    const m = await admin('PUT', `/api/environments/${envs[s]}/db-mappings/${envs[t]}`, {
      json: { mappings: [{ source_database_id: sources[s].database.id, target_database_id: targetDb.id }] },
    });
    expect(m.status, m.text).toBe(200);
  }
}, 900_000);

afterAll(async () => {
  await h?.close();
  for (const c of Object.values(clients)) c.close();
  if (!releases.length || pairResults.size < pairs.length || readResults.size < releases.length) return; // a partial run writes nothing
  const markdown = renderMatrix({
    releases: releases.map((r) => ({ release: r, metadata: instances[r].metadata })),
    pairs: pairs.map(([s, t]) => pairResults.get(key(s, t))!),
    reads: releases.map((r) => readResults.get(r)!),
    seconds: (Date.now() - started) / 1000,
    date: new Date().toISOString().slice(0, 10),
  });
  writeMatrix(REPO_ROOT, markdown);
});

describe.skipIf(!releases.length)('migrations across releases', () => {
  it.each(pairs)('%s → %s: dry run, migration with verification, no hijack, idempotent re-run', async (s, t) => {
    const result: PairResult = { source: s, target: t, ok: false, dropped: [], defaulted: [], seconds: 0 };
    pairResults.set(key(s, t), result);
    const t0 = Date.now();
    const p = prefixes[s];
    const cl = clients[t];
    const { targetDb, bait, slugOwner } = traps.get(key(s, t))!;
    let task: any;
    try {
      task = await migrate(s, t, { dry_run: true });
      expect(task.status, whyFailed(task)).toBe('SUCCEEDED');
      const plan = task.result.items[0];
      expect(plan.status).toBe('planned');
      expect(plan.objects.find((o: any) => o.kind === 'dashboard').action).toBe('create');
      expect(plan.objects.find((o: any) => o.kind === 'database')).toMatchObject({ action: 'reuse', target_id: targetDb.id });

      task = await migrate(s, t);
      expect(task.status, whyFailed(task)).toBe('SUCCEEDED');
      const o = task.result.items[0];
      expect(o.status, whyFailed(task)).toBe('imported');
      expect(o.verification, whyFailed(task)).toMatchObject({ ok: true, dashboard_present: true, charts_expected: 2, charts_linked: 2 });
      expect(o.verification.charts.every((c: any) => c.ok && c.rows > 0)).toBe(true);
      result.dropped = fieldsOf(o.dropped_fields);
      result.defaulted = fieldsOf(o.defaulted_fields ?? []);
      // The traps: the slug stays with its owner, the same-named database is untouched, datasets land on the mapped one.
      expect(o.collisions).toEqual([expect.objectContaining({ kind: 'slug' })]);
      expect((await getDashboard(cl, slugOwner.id)).result.dashboard_title).toBe(slugOwner.title);
      const migrated = (await getDashboard(cl, o.dashboard_uuid)).result;
      expect(migrated.id).toBe(o.target_dashboard_id);
      expect(migrated.slug ?? null).toBeNull();
      const dbs = await listAll<{ id: number; [k: string]: unknown }>(cl, 'database', {
        columns: ['id', 'uuid', 'database_name'],
      } as never);
      expect(dbs.find((d) => d.id === bait.id)?.uuid).toBe(bait.uuid);
      expect(dbs.filter((d) => String(d.database_name).startsWith(p))).toHaveLength(2);
      const datasets = await listAll<{ id: number; [k: string]: any }>(cl, 'dataset', {
        columns: ['id', 'table_name', 'database.id'],
      } as never);
      expect(datasets.filter((d) => d.table_name === `${p}_sales` && d.database?.id === targetDb.id)).toHaveLength(1);
      expect(datasets.filter((d) => d.database?.id === bait.id)).toHaveLength(0);

      const charts = async () =>
        (await listAll<{ id: number; [k: string]: unknown }>(cl, 'chart', { columns: ['id', 'slice_name'] } as never)).filter((c) =>
          String(c.slice_name).startsWith(p),
        ).length;
      const before = await charts();
      task = await migrate(s, t);
      expect(task.status, whyFailed(task)).toBe('SUCCEEDED');
      const again = task.result.items[0];
      // Nothing changed since: reported unchanged and not imported (so not verified again either).
      expect(again.status, whyFailed(task)).toBe('unchanged');
      expect(again.target_dashboard_id).toBe(o.target_dashboard_id);
      expect(
        again.objects.filter((x: any) => x.action === 'create'),
        'a re-run creates nothing',
      ).toEqual([]);
      expect(await charts()).toBe(before);
      result.ok = true;
    } catch (err) {
      result.reason = (err as Error).message.split('\n')[0].replace(/^expected .*$/, whyFailed(task));
      throw err;
    } finally {
      result.seconds = (Date.now() - t0) / 1000;
    }
  });
});

describe.skipIf(!releases.length)('read side on each release', () => {
  it.each(releases)('%s: connection test, lists, detail, datasets, mapping suggestions, backup and restore', async (r) => {
    const result: ReadResult = { release: r, metadata: instances[r].metadata, checks: [] };
    readResults.set(r, result);
    const env = envs[r];
    const p = prefixes[r];
    const dashboard = sources[r].dashboards[0];
    const check = async (name: string, body: () => Promise<void>) => {
      try {
        await body();
        result.checks.push({ name, ok: true });
      } catch (err) {
        result.checks.push({ name, ok: false, detail: (err as Error).message.split('\n')[0] });
      }
    };
    await check('connection test', async () => {
      const t = await admin('POST', `/api/environments/${env}/test`);
      expect(t.body, t.text).toMatchObject({ ok: true, version: r, capabilities: { version: r, security_api: true } });
      expect(t.body.capabilities.lists.dataset.filters).toContain('table_name');
      expect(t.body.capabilities.lists.dashboard.uuid_column).toBe(true);
    });
    await check('dashboards', async () => {
      const l = await admin('GET', `/api/dashboards?env_id=${env}&search=${encodeURIComponent(p)}`);
      expect(l.status, l.text).toBe(200);
      expect(l.body.items.map((d: any) => d.id)).toContain(dashboard.id);
    });
    await check('detail', async () => {
      const d = await admin('GET', `/api/dashboards/${dashboard.id}?env_id=${env}`);
      expect(d.status, d.text).toBe(200);
      expect(d.body.dashboard_title ?? d.body.title).toBe(dashboard.title);
    });
    await check('datasets', async () => {
      const d = await admin('GET', `/api/datasets?env_id=${env}&search=${encodeURIComponent(`${p}_sales`)}`);
      expect(d.status, d.text).toBe(200);
      expect(d.body.total).toBeGreaterThanOrEqual(1);
    });
    await check('mapping suggestions', async () => {
      const other = releases.find((x) => x !== r)!;
      const m = await admin('GET', `/api/dashboards/db-mappings?source_env_id=${env}&target_env_id=${envs[other]}`);
      expect(m.status, m.text).toBe(200);
      const item = m.body.items.find((i: any) => i.source_database.id === sources[r].database.id);
      expect(item.saved_target?.name).toBe(`${p}_warehouse`);
    });
    // The rule API through the project's client: roles from its related list, create (4.1 answers 201, later 200), update, list, detail.
    const ruleName = `${p} west`;
    await check('row-level security', async () => {
      const c = clients[r];
      const gamma = (await c.listRlsRoles()).find((x) => x.name === 'Gamma')!;
      const body = {
        name: ruleName,
        filter_type: 'Regular',
        clause: "region = 'NA'",
        group_key: 'region',
        description: 'matrix',
        tables: [sources[r].sales.id],
        roles: [gamma.id],
      };
      const id = await c.createRlsRule(body);
      await c.updateRlsRule(id, { ...body, clause: "region = 'EMEA'" });
      expect((await c.listRlsRules()).find((x) => x.id === id)).toMatchObject({
        name: ruleName,
        clause: "region = 'EMEA'",
        tables: [{ id: sources[r].sales.id }],
        roles: [{ id: gamma.id, name: 'Gamma' }],
      });
      expect((await c.getRlsRule(id)).description).toBe('matrix');
    });
    await check('backup and restore', async () => {
      const b = await admin('POST', '/api/dashboards/backup', { json: { env_id: env, dashboard_ids: [dashboard.id] } });
      expect(b.status, b.text).toBe(202);
      const backup = await waitTask(h, b.body.task_id, 240_000);
      expect(backup.status, JSON.stringify(backup.result?.items?.[0])).toBe('SUCCEEDED');
      expect(backup.result.items[0].rls_rules).toBe(1);
      await clients[r].request('PUT', `/api/v1/dashboard/${dashboard.id}`, { json: { dashboard_title: `${dashboard.title} (changed)` } });
      const rule = (await clients[r].listRlsRules()).find((x) => x.name === ruleName);
      if (rule) await clients[r].deleteRlsRule(rule.id);
      const restore = await admin('POST', `/api/dashboards/backups/${backup.result.items[0].backup_id}/restore`, { json: {} });
      expect(restore.status, restore.text).toBe(202);
      const restored = await waitTask(h, restore.body.task_id, 240_000);
      expect(restored.status, JSON.stringify(restored.result?.items?.[0])).toBe('SUCCEEDED');
      expect((await getDashboard(clients[r], dashboard.id)).result.dashboard_title).toBe(dashboard.title);
      expect((await clients[r].listRlsRules()).find((x) => x.name === ruleName)).toMatchObject({
        clause: "region = 'EMEA'",
        tables: [{ id: sources[r].sales.id }],
      });
    });
    expect(result.checks.filter((c) => !c.ok)).toEqual([]);
  });
});
