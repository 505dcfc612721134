import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, prefixedTables, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  type SupersetClient,
} from '../support/superset/fixtures.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';

/**
 * The console starts a validation and reads its result, against the real API, worker and
 * Superset 6.1.0 (a): a dashboard's Validate button (the environment page has one for all of them)
 * starts the task, its link opens the task page, and the dashboard (its table dropped) shows as broken with its chart's verdict,
 * Superset's message and when it was first seen broken.
 */
const enabled = inject('supersets') !== null;
const P = `wv${Date.now().toString(36)}`;
const WAIT = { timeout: 30_000 };
let h: Harness;
let a: SupersetClient;
let browser: Browser;
let page: Page;
let errors: string[];
let envId: string;

beforeAll(async () => {
  [h, browser] = await Promise.all([createHarness({ worker: true }), launchBrowser()]);
  ({ page, errors } = await openPage(browser, h.baseUrl));
  if (!enabled) return;
  a = await client('a');
  const db = await createSqliteDatabase(a, { name: `${P}_wh`, path: path.join(inject('runDir'), P, 'wh.db'), tables: prefixedTables(P) });
  const ds = await createDataset(a, { database: db.id, tableName: `${P}_customers` });
  const chart = await createTableChart(a, { name: `${P} people`, datasetId: ds.id, columns: ['name'] });
  await createDashboard(a, { title: `${P} customers`, charts: [chart] });
  const file = new DatabaseSync(db.path);
  file.exec(`DROP TABLE "${P}_customers"`);
  file.close();
  envId = await registerEnvironment(h, 'a', `${P}-a`);
}, 240_000);
afterAll(async () => {
  await browser?.close();
  a?.close();
  await h?.close();
});

describe.skipIf(!enabled)('validation in the console', () => {
  it("starts a validation from a dashboard's page and reads the broken chart on the task page", { timeout: 240_000 }, async () => {
    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/dashboards?env=${envId}&all=1&q=${encodeURIComponent(`${P} customers`)}`);
    const card = page.getByTestId('dashboard-card').filter({ hasText: `${P} customers` });
    await expect.poll(() => card.count(), WAIT).toBe(1);
    await card.getByRole('button', { name: `${P} customers` }).click();
    await page.getByRole('button', { name: 'Validate', exact: true }).click();
    const link = page.getByTestId('validation-task');
    await expect.poll(() => link.count(), WAIT).toBe(1);
    const taskId = (await link.innerText()).split(' ').pop()!;
    expect((await waitTask(h, taskId, 180_000)).status).toBe('FAILED');
    await link.click();
    const history = page.getByTestId('validation-history');
    await expect.poll(() => history.count(), WAIT).toBe(1);
    const text = await history.first().innerText();
    expect(text).toMatch(/^broken at .*newly broken; never seen passing$/);
    const charts = page.getByRole('table', { name: 'Charts and their verdicts' });
    expect(await charts.innerText()).toContain(`${P} people`);
    expect(await charts.innerText()).toMatch(new RegExp(`broken[\\s\\S]*${P}_customers`, 'i'));
    expect(errors).toEqual([]);
  });
});
