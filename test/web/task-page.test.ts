// The task page at scale, in Chromium: a migration of 1,000 dashboards (arranged through the
// stores: test/support/task-items.ts) shows its summary first, then a window of its dashboards
// (never 1,000 rows in the page), filtered to the failed ones on the server, searched by title,
// scrolled page by page to the last one, one opened on demand with its objects; the page stays
// short, and the bulk retry of all failed dashboards with the suggested fix sends one request.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { seedMigrationTask, type SeededTask } from '../support/task-items.ts';
import { launchBrowser, openPage, screenshot, signIn } from './browser.ts';

const WAIT = { timeout: 30_000 };
let h: Harness;
let browser: Browser;
let page: Page;
let errors: string[];
let seeded: SeededTask;

beforeAll(async () => {
  [h, browser] = await Promise.all([createHarness(), launchBrowser()]);
  seeded = await seedMigrationTask(h, { dashboards: 1000, failEvery: 25, changeEvery: 9 });
  ({ page, errors } = await openPage(browser, h.baseUrl, { width: 1440, height: 900 }));
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const rows = () => page.getByTestId('task-item-row');
const scroller = () => page.getByTestId('task-items-scroller');
const texts = (id: string) => page.getByTestId(id).allTextContents();

describe('task page with 1,000 dashboards', () => {
  it('shows the summary, a window of rows, filters, searches, scrolls and opens one', { timeout: 240_000 }, async () => {
    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/tasks/${seeded.id}`);
    const summary = page.getByTestId('items-summary');
    await expect.poll(() => page.getByTestId('summary-outcomes').textContent(), WAIT).toContain(`failed ${seeded.failed.length}`);
    expect(await page.getByTestId('summary-outcomes').textContent()).toContain(`planned ${1000 - seeded.failed.length}`);
    expect(await page.getByTestId('summary-changes').textContent()).toContain(`changed ${seeded.changed.length}`);
    expect(await page.getByTestId('summary-objects').textContent()).toMatch(
      /13000 objects by action.*create \d+.*update \d+.*unchanged \d+/,
    );
    expect(await page.getByTestId('summary-durations').textContent()).toContain('migration 61.0 s');
    expect(await summary.getByRole('button', { name: 'retry_failed' }).count()).toBe(1);
    // the bulk fix sends one request for every failed dashboard with the task's options and the fix
    // (answered here, so no migration starts against the seeded environments)
    let sent: any;
    await page.route('**/api/dashboards/migrate', (route) => {
      sent = route.request().postDataJSON();
      return route.fulfill({
        status: 202,
        contentType: 'application/json',
        body: JSON.stringify({ task_id: 'migration-started', status: 'PENDING' }),
      });
    });
    await summary.getByRole('button', { name: 'retry_with_rls_copy_all' }).click();
    await expect.poll(() => summary.getByTestId('started-task').getAttribute('href'), WAIT).toBe('/tasks/migration-started');
    expect(sent).toMatchObject({ dashboard_ids: seeded.failed, rls: 'copy', dry_run: true, verification: 'browser' });

    // a window of rows, not a thousand; the page itself stays short
    await expect.poll(() => rows().count(), WAIT).toBeGreaterThan(5);
    expect(await rows().count()).toBeLessThan(60);
    expect(await page.getByTestId('object-diff').count()).toBe(0);
    expect(await page.getByTestId('items-matching').textContent()).toBe('1000 of 1000');
    const height = () => page.locator('html').evaluate((el) => (el as unknown as { scrollHeight: number }).scrollHeight);
    expect(await height()).toBeLessThan(2500);
    await screenshot(page, 'task-page-1000');

    // scrolled to the end, page by page: the last dashboard, still a window of rows
    const scrolledToEnd = async () => {
      await scroller().evaluate((el) => el.scrollTo(0, el.scrollHeight));
      return (await texts('task-item-title')).includes('Board 1000');
    };
    await expect.poll(scrolledToEnd, { timeout: 120_000 }).toBe(true);
    expect(await rows().count()).toBeLessThan(60);

    // failed only, from the server
    await page.getByText('failed', { exact: true }).first().click();
    await expect.poll(() => page.getByTestId('items-matching').textContent(), WAIT).toBe(`${seeded.failed.length} of 1000`);
    await expect.poll(async () => new Set(await texts('task-item-outcome')), WAIT).toEqual(new Set(['failed']));
    expect(await texts('task-item-title')).toContain(`Board ${seeded.failed[0]}`);

    // a title search within the failed ones
    await page.getByLabel('Search by title').fill('Board 975');
    await expect.poll(() => texts('task-item-title'), WAIT).toEqual(['Board 975']);

    // opened on demand: its objects, the error and its own next action
    await page.getByRole('button', { name: 'Show Board 975' }).click();
    await expect.poll(() => page.getByTestId('object-diff').count(), WAIT).toBe(1);
    expect(await page.getByTestId('object-action').count()).toBe(13);
    expect(await page.getByTestId('task-item-detail').textContent()).toContain('RLS differs for dashboard 975');
    expect(await page.getByTestId('task-item-detail').getByRole('button', { name: 'retry_with_rls_copy' }).count()).toBe(1);
    expect(await height()).toBeLessThan(2500);

    // changed ones, from the server
    await page.getByLabel('Search by title').fill('');
    await page.getByText('changed', { exact: true }).first().click();
    await expect.poll(() => page.getByTestId('items-matching').textContent(), WAIT).toBe(`${seeded.changed.length} of 1000`);
    await expect.poll(async () => new Set(await texts('task-item-change')), WAIT).toEqual(new Set(['changed']));
    expect(errors).toEqual([]);
  });
});
