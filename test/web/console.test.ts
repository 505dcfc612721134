// The web console in a real browser (Debian's Chromium through playwright-core) against the real
// API, a real worker and real Superset a → b: sign in, add an environment, dashboards with
// thumbnails, dry run then migrate with the diff shown, live logs to the end.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, onTestFailed } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { supersets } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createSqliteDatabase } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, superset, type SourceFixture } from '../migrations/support.ts';
import { distinctColours, launchBrowser, openPage, screenshot, signIn } from './browser.ts';

let h: Harness;
let browser: Browser;
let page: Page;
let errors: string[];
let fake: FakeSuperset;
const P = `w${Date.now().toString(36)}`;
const real = supersets() !== null;
/** UI waits: a shared 2-core machine can be slow to render. */
const WAIT = { timeout: 15_000 };

beforeAll(async () => {
  [h, fake, browser] = await Promise.all([createHarness({ worker: true }), startFakeSuperset({ thumbnails: true }), launchBrowser()]);
  ({ page, errors } = await openPage(browser, h.baseUrl));
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await fake?.close();
  await h?.close();
});

describe('serving', () => {
  it('answers the app at / and at any app URL, while unknown /api paths stay problem bodies', async () => {
    const root = await fetch(`${h.baseUrl}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toContain('text/html');
    expect(root.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await root.text()).toContain('<div id="root">');
    const deep = await fetch(`${h.baseUrl}/tasks/some-task`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    const api = await fetch(`${h.baseUrl}/api/nothing-here`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toContain('application/problem+json');
    expect((await fetch(`${h.baseUrl}/assets/missing-chunk.js`)).status).toBe(404);
    const escape = await fetch(`${h.baseUrl}/..%2f..%2fpackage.json`);
    expect(escape.status).toBe(404);
    expect(await escape.text()).not.toContain('"dependencies"');
    expect((await fetch(`${h.baseUrl}/`, { method: 'POST' })).status).toBe(404);
    expect(await (await fetch(`${h.baseUrl}/environments`)).text()).toContain('<meta name="switchyard-oidc" content="off">');
  });
});

describe('journeys', () => {
  beforeEach(() => onTestFailed(async ({ task }) => void (await page.screenshot({ path: `/tmp/web-failed-${task.name.slice(0, 20).replace(/\W/g, '_')}.png` }).catch(() => undefined))));
  it('signs in with a password; a wrong one is said so', async () => {
    await page.goto('/');
    await page.getByLabel(/^Username/).fill(ADMIN.username);
    await page.getByLabel(/^Password/).fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').count(), WAIT).toBeGreaterThan(0);
    await signIn(page, ADMIN.username, ADMIN.password);
    await expect.poll(() => page.getByRole('heading', { name: 'Overview' }).count(), WAIT).toBe(1);
    await screenshot(page, 'overview');
  });

  it('adds an environment and tests its connection', async () => {
    await page.getByRole('link', { name: 'Environments' }).click();
    await page.getByRole('button', { name: 'Add' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Name/).fill(`${P}-fake`);
    await dialog.getByLabel(/^Superset URL/).fill(fake.baseUrl);
    await dialog.getByLabel(/^Username/).fill(fake.username);
    await dialog.getByLabel(/^Password/).fill(fake.password);
    await expect.poll(() => dialog.getByText('The password is write-only').count(), WAIT).toBe(1);
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = page.getByRole('row').filter({ hasText: `${P}-fake` });
    await row.waitFor();
    const listed = await h.request('GET', '/api/environments', { token: h.adminToken });
    expect(listed.body.items.map((e: any) => e.name)).toContain(`${P}-fake`);
    await row.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => page.getByTestId('env-test-result').textContent(), { timeout: 20_000 }).toMatch(/^OK/);
    await screenshot(page, 'environments');
  });

  it('lists dashboards with thumbnails: an image when ready, a placeholder with retry while Superset renders it', async () => {
    for (let i = 0; i < 30; i++) fake.addDashboard({ title: `${P} board ${String(i).padStart(2, '0')}`, slug: `${P}-${i}` });
    fake.dashboards.forEach((d, i) => (d.thumbnail = i % 3 === 0 ? 'pending' : 'ready'));
    const env = (await h.request('GET', '/api/environments', { token: h.adminToken })).body.items.find((e: any) => e.name === `${P}-fake`).id;
    await page.goto(`/dashboards?env=${env}`);
    await expect.poll(() => page.getByTestId('dashboard-card').count(), { timeout: 20_000 }).toBe(24);
    await expect.poll(() => page.getByTestId('thumbnail').count(), { timeout: 20_000 }).toBe(16);
    expect(await page.getByTestId('thumbnail-placeholder').count()).toBe(8);
    await expect.poll(() => page.getByText('Thumbnail being rendered').count(), WAIT).toBe(8);
    expect(await page.getByText('Showing everything').count()).toBe(1);
    // the next page, then a search
    await page.getByRole('button', { name: '2', exact: true }).click();
    await expect.poll(() => page.getByTestId('dashboard-card').count(), WAIT).toBe(6);
    expect(page.url()).toContain('page=2');
    await screenshot(page, 'dashboards');
    // a rendered thumbnail appears on retry
    fake.dashboards.forEach((d) => (d.thumbnail = 'ready'));
    await page.getByRole('button', { name: 'Retry' }).first().click();
    await expect.poll(() => page.getByTestId('thumbnail').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(5);
  });

  describe.runIf(real)('with real Superset a → b', () => {
    let src: SourceFixture;
    let envA: string;
    let envB: string;
    beforeAll(async () => {
      const [a, b] = await Promise.all([client('a'), client('b')]);
      const dir = path.join(inject('runDir'), P);
      src = await buildSource(a, P, dir, { dashboards: 1 });
      envA = await registerEnvironment(h, 'a', `${P}-a`);
      envB = await registerEnvironment(h, 'b', `${P}-b`);
      const targetDb = await createSqliteDatabase(b, { name: `${P}_warehouse`, path: path.join(dir, `${P}-b.db`), tables: prefixedTables(P) });
      const r = await h.request('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
        token: h.adminToken,
        json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
      });
      expect(r.status, r.text).toBe(200);
      expect(superset('a').version).toBe('6.1.0');
    }, 180_000);

    it('dry-runs a migration and shows the per-object diff, then migrates and follows the live logs to the end', async () => {
      const d = src.dashboards[0];
      await page.goto(`/migrate?source=${envA}&target=${envB}&ids=${d.id}`);
      await page.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => page.getByRole('table', { name: 'Database mappings' }).textContent(), { timeout: 20_000 }).toContain(`${P}_warehouse`);
      await page.getByRole('button', { name: 'Dry run' }).click();
      await expect.poll(() => page.getByTestId('object-diff').count(), { timeout: 90_000 }).toBe(1);
      const actions = await page.getByTestId('object-action').allTextContents();
      // a new dashboard with its two charts and dataset; the mapped database is reused
      expect(actions.filter((a) => a === 'create').length).toBeGreaterThanOrEqual(4);
      expect(actions).toContain('reuse');
      expect(await page.getByTestId('object-diff').textContent()).toContain(d.title);
      await screenshot(page, 'migrate-dry-run');
      await page.getByRole('button', { name: 'Migrate', exact: true }).click();
      await page.getByRole('link', { name: 'Live logs' }).click();
      await expect.poll(() => page.getByTestId('log-state').textContent(), { timeout: 120_000 }).toBe('ended');
      await expect.poll(() => page.getByTestId('task-status').textContent(), { timeout: 10_000 }).toBe('SUCCEEDED');
      const logs = await page.getByTestId('live-logs').textContent();
      expect(logs).toMatch(/completed|succeeded/i);
      expect(await page.getByTestId('object-action').allTextContents()).toContain('create');
      await screenshot(page, 'task-live-logs');
      const tasks = await h.request('GET', '/api/tasks?task_type=migration', { token: h.adminToken });
      expect(tasks.body.items.map((t: any) => t.status).sort()).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    }, 240_000);
  });

  it('works on a narrow screen and in Russian, and said nothing in the console', async () => {
    const narrow = await openPage(browser, h.baseUrl, { width: 390, height: 844 });
    await signIn(narrow.page, ADMIN.username, ADMIN.password);
    await narrow.page.getByText('RU', { exact: true }).click();
    await narrow.page.getByRole('button', { name: 'menu' }).click();
    await expect.poll(() => narrow.page.getByRole('link', { name: 'Окружения' }).isVisible(), WAIT).toBe(true);
    await narrow.page.getByRole('link', { name: 'Задачи' }).click();
    await expect.poll(() => narrow.page.getByRole('heading', { name: 'Задачи' }).count(), WAIT).toBe(1);
    expect(distinctColours(await narrow.page.screenshot())).toBeGreaterThan(16);
    await screenshot(narrow.page, 'tasks-narrow-ru');
    await narrow.page.context().close();
    // The wrong password's 401 is the one expected resource error.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    expect(narrow.errors).toEqual([]);
  });
});
