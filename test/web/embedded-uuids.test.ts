import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';
import { createStoredTask } from '../support/task-items.ts';

/**
 * The console's task page shows a migrated dashboard's embedded uuids, the source's and the one
 * Superset assigned in the target (host apps must be pointed at it): a finished migration whose
 * outcome carries an `embedded` companion, stored as the workflow stores it.
 */
let h: Harness;
let browser: Browser;
let page: Page;
const WAIT = { timeout: 15_000 };

beforeAll(async () => {
  [h, browser] = await Promise.all([createHarness(), launchBrowser()]);
  ({ page } = await openPage(browser, h.baseUrl));
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the task page', () => {
  it("lists a migrated dashboard's embedded uuid in the source and the new one in the target", { timeout: 120_000 }, async () => {
    const { stores } = h.boot.context;
    const id = randomUUID();
    await createStoredTask(h, { type: 'migration', id, summary: 'migrating a dashboard' });
    const [source, target] = [randomUUID(), randomUUID()];
    const embedded = {
      kind: 'embedded',
      mode: 'copy',
      available: true,
      items: [
        {
          name: 'embedded',
          action: 'create',
          done: true,
          source_uuid: source,
          target_uuid: target,
          note: 'allowed_domains: https://app.example.com',
        },
      ],
    };
    const outcome = {
      kind: 'dashboard',
      id: 7,
      title: 'Sales',
      status: 'imported',
      objects: [],
      collisions: [],
      next_actions: [],
      companions: [embedded],
    };
    const totals = {
      requested: 1,
      processed: 1,
      imported: 1,
      unchanged: 0,
      imported_with_errors: 0,
      planned: 0,
      skipped: 0,
      failed: 0,
      not_started: 0,
    };
    await stores.tasks.finish(
      id,
      'SUCCEEDED',
      { items: [outcome], not_started: 0, cancelled: false, next_actions: [], dry_run: false, totals },
      null,
    );

    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/tasks/${id}`);
    const line = page.getByTestId('embedded-uuids');
    await expect.poll(() => line.getByText(source, { exact: true }).count(), WAIT).toBe(1);
    await expect.poll(() => line.getByText(target, { exact: true }).count(), WAIT).toBe(1);
  });
});
