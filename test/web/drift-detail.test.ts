import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriftItem, DriftReportResult } from '../../contracts/schedules.ts';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';
import { createStoredTask } from '../support/task-items.ts';

/**
 * The console's task page opens a drift report's dashboard with what differs: each companion
 * named with what differs and what brings it in line, and a kind that was not compared with the
 * reason. A finished drift report stored as the workflow stores it.
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

const again = { action: 'migrate_again', description: "Migrate 'Sales' again (source wins)" };
const item: DriftItem = {
  kind: 'dashboard',
  id: 7,
  title: 'Sales',
  status: 'drifted',
  outcome: 'succeeded',
  dashboard_uuid: randomUUID(),
  target_dashboard_id: 70,
  differences: [],
  companions: [
    { kind: 'tags', name: 'ops-weekly', action: 'create', difference: 'in the source, not in the target', next_action: again },
    {
      kind: 'reports',
      name: 'Weekly sales',
      action: 'update',
      fields: ['crontab'],
      difference: 'differs in the target: crontab',
      next_action: again,
    },
  ],
  companions_not_compared: [{ kind: 'themes', reason: "the target's Superset release has no themes", dropped: [{ name: 'Brand' }] }],
  next_actions: [again],
};

describe('the task page', () => {
  it("opens a drift report's dashboard with each differing companion and the kinds not compared", { timeout: 120_000 }, async () => {
    const { stores } = h.boot.context;
    const id = randomUUID();
    await createStoredTask(h, { type: 'drift_report', id, summary: 'drift report' });
    const result: DriftReportResult = {
      source_env_id: randomUUID(),
      target_env_id: randomUUID(),
      totals: { compared: 1, in_sync: 0, drifted: 1, failed: 0 },
      items: [item],
      not_started: 0,
      cancelled: false,
      next_actions: [],
    };
    await stores.tasks.finish(id, 'SUCCEEDED', result, null);

    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/tasks/${id}`);
    const rows = page.getByTestId('drift-companion');
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    expect(await rows.nth(0).getAttribute('data-kind')).toBe('tags');
    expect(await rows.nth(0).innerText()).toContain('ops-weekly');
    expect(await rows.nth(1).innerText()).toContain('differs in the target: crontab');
    expect(await rows.nth(1).innerText()).toContain("Migrate 'Sales' again");
    expect(await page.getByTestId('drift-not-compared').innerText()).toContain(
      "themes not offered: the target's Superset release has no themes · 'Brand'",
    );
  });
});
