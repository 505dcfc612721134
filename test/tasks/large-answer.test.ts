// A task answer stays small at 1,000 dashboards (contracts/task-answer.ts): past 100 items the
// task answer, the report and the real `switchyard` binary's JSON leave the items out (a row of
// the task list carries none)
// and say where to page them; the items endpoint pages them; the CLI's table of the task and of
// its report still prints a row per dashboard, read page by page; a task of 100 items is answered
// exactly as before. Arranged through the stores (test/support/task-items.ts): no Superset needed.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_ITEMS_LIMIT } from '../../contracts/task-answer.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { seedMigrationTask, type SeededTask } from '../support/task-items.ts';

const BIN = fileURLToPath(new URL('../../cli/switchyard.cjs', import.meta.url));
let h: Harness;
let large: SeededTask;
let small: SeededTask;
let oneOver: SeededTask;
let apiKey: string;
let home: string;

beforeAll(async () => {
  h = await createHarness();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-large-'));
  const key = await h.request('POST', '/api/admin/api-keys', {
    token: h.adminToken,
    json: { name: 'large-answer-ci', permissions: ['tasks:READ'] },
  });
  expect(key.status, key.text).toBe(201);
  apiKey = key.body.key;
  small = await seedMigrationTask(h, { dashboards: ANSWER_ITEMS_LIMIT, failEvery: 25, changeEvery: 9 });
  oneOver = await seedMigrationTask(h, { dashboards: ANSWER_ITEMS_LIMIT + 1, failEvery: 25, changeEvery: 9 });
  large = await seedMigrationTask(h, { dashboards: 1000, failEvery: 25, changeEvery: 9 });
}, 300_000);
afterAll(async () => {
  await h?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

const get = (p: string) => h.request('GET', p, { token: h.adminToken });
const stored = async (id: string) => (await h.boot.context.stores.tasks.get(id))!.result as Record<string, any>;
const bytes = (v: unknown) => Buffer.byteLength(typeof v === 'string' ? v : JSON.stringify(v));

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      BIN,
      args,
      {
        env: {
          PATH: process.env.PATH,
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, '.config'),
          SWITCHYARD_URL: h.baseUrl,
          SWITCHYARD_API_KEY: apiKey,
        },
        timeout: 120_000,
        maxBuffer: 64 << 20,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The dashboard ids of the item rows of a CLI table (│ ✓ │ 17 │ Board 17 │ ...). */
const rowIds = (table: string) => [...table.matchAll(/│ [✓✗] +│ (\d+) +│ Board (\d+) +│/g)].map((m) => Number(m[1]));

describe('the answer of a task of 1,000 dashboards', () => {
  it('keeps the totals and the items summary, leaves the items out and says where to page them', async () => {
    const r = await get(`/api/tasks/${large.id}`);
    expect(r.status, r.text).toBe(200);
    const full = await stored(large.id);
    const before = bytes({ ...r.body, result: full });
    console.log(`GET /api/tasks/{id} of 1,000 dashboards: ${bytes(r.text)} bytes (with every item: ${before})`);
    expect(bytes(r.text)).toBeLessThan(16_000);
    expect(before).toBeGreaterThan(1_000_000);
    expect(r.body.result.items).toBeUndefined();
    expect(r.body.result).toMatchObject({ items_omitted: true, items_total: 1000, items_url: `/api/tasks/${large.id}/items` });
    // everything else of the result is there as stored: totals, task-level next actions, timings
    const { items: _items, ...rest } = full;
    expect(r.body.result).toEqual({ ...rest, items_omitted: true, items_total: 1000, items_url: `/api/tasks/${large.id}/items` });
    expect(r.body.items_summary).toMatchObject({
      total: 1000,
      by_outcome: { failed: large.failed.length, planned: 1000 - large.failed.length },
    });
  });

  it('the items endpoint at items_url pages all of them', async () => {
    const url = (await get(`/api/tasks/${large.id}`)).body.result.items_url;
    const ids: number[] = [];
    for (let page = 1; ; page++) {
      const p = await get(`${url}?page=${page}&page_size=100`);
      expect(p.status, p.text).toBe(200);
      ids.push(...p.body.items.map((x: any) => x.item.id));
      if (!p.body.has_next) break;
    }
    expect(ids).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect((await get(`${url}?outcome=failed&page_size=100`)).body.items.map((x: any) => x.item.id)).toEqual(large.failed);
  });

  it('the task list and the report stay small too; the report counts every item and retries every failed one', async () => {
    // a row of the list carries no items at all: a page of tasks of 100 dashboards each would weigh megabytes
    const list = await get('/api/tasks?page_size=3');
    expect(list.status).toBe(200);
    console.log(`GET /api/tasks?page_size=3 (1,000, 101 and 100 dashboards): ${bytes(list.text)} bytes`);
    expect(bytes(list.text)).toBeLessThan(40_000);
    const row = (id: string) => list.body.items.find((t: any) => t.id === id).result;
    expect(row(large.id)).toMatchObject({ items_omitted: true, items_total: 1000, items_url: `/api/tasks/${large.id}/items` });
    expect(row(small.id)).toMatchObject({ items_omitted: true, items_total: ANSWER_ITEMS_LIMIT });
    expect(row(small.id).items).toBeUndefined();

    const r = await get(`/api/reports/${large.id}`);
    expect(r.status, r.text).toBe(200);
    console.log(`GET /api/reports/{id} of 1,000 dashboards: ${bytes(r.text)} bytes`);
    expect(bytes(r.text)).toBeLessThan(120_000);
    const report = r.body.report;
    expect(report.items).toBeUndefined();
    expect(report).toMatchObject({ items_omitted: true, items_total: 1000, items_url: `/api/tasks/${large.id}/items` });
    expect(report.summary).toMatchObject({ total: 1000, failed: large.failed.length, planned: 1000 - large.failed.length });
    const retry = report.next_actions.find((a: any) => a.action === 'retry_failed');
    expect(retry.request.body.dashboard_ids).toEqual(large.failed);
    expect(report.next_actions.some((a: any) => a.action === 'read_logs')).toBe(true);
  });
});

describe("the assistant's answer about a task of 1,000 dashboards", () => {
  it('carries the task as the task answer does: totals, no items, where to page them', async () => {
    const r = await h.request('POST', '/api/assistant/messages', { token: h.adminToken, json: { text: `статус задачи ${large.id}` } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ state: 'executed', data: { task: { id: large.id } } });
    expect(r.body.data.task.result).toMatchObject({ items_omitted: true, items_total: 1000, items_url: `/api/tasks/${large.id}/items` });
    expect(bytes(r.text)).toBeLessThan(20_000);
  });
});

describe('a task of up to 100 items', () => {
  it('is answered as before, items and all; one more item and they are left out', async () => {
    const r = await get(`/api/tasks/${small.id}`);
    expect(r.body.result).toEqual(await stored(small.id));
    expect(r.body.result.items).toHaveLength(ANSWER_ITEMS_LIMIT);
    expect(r.body.result.items_omitted).toBeUndefined();
    const report = (await get(`/api/reports/${small.id}`)).body.report;
    expect(report.items).toHaveLength(ANSWER_ITEMS_LIMIT);
    expect(report.items_omitted).toBeUndefined();

    const over = await get(`/api/tasks/${oneOver.id}`);
    expect(over.body.result).toMatchObject({ items_omitted: true, items_total: ANSWER_ITEMS_LIMIT + 1 });
    expect((await get(`/api/reports/${oneOver.id}`)).body.report.items_omitted).toBe(true);
  });
});

describe('switchyard CLI on a task of 1,000 dashboards', () => {
  it('report prints a row per dashboard, paged from the items endpoint, and exits 2 (some failed)', { timeout: 120_000 }, async () => {
    const r = await cli(['report', large.id]);
    expect(r.code, r.stderr).toBe(2);
    expect(rowIds(r.stdout)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    // what failed, on stderr: every failed dashboard with its error
    for (const d of large.failed) expect(r.stderr).toContain(`RLS differs for dashboard ${d}`);
    const json = await cli(['-o', 'json', 'report', large.id]);
    expect(json.code, json.stderr).toBe(2);
    expect(bytes(json.stdout)).toBeLessThan(200_000);
    expect(JSON.parse(json.stdout).report).toMatchObject({ items_omitted: true, items_total: 1000 });
  });

  it('tasks show prints a row per dashboard too; a small task prints its rows as before', { timeout: 120_000 }, async () => {
    const r = await cli(['tasks', 'show', large.id]);
    expect(r.code, r.stderr).toBe(2);
    expect(rowIds(r.stdout)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const s = await cli(['tasks', 'show', small.id]);
    expect(s.code, s.stderr).toBe(2);
    expect(rowIds(s.stdout)).toEqual(Array.from({ length: ANSWER_ITEMS_LIMIT }, (_, i) => i + 1));
  });
});
