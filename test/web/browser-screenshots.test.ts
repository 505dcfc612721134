import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserCheck } from '../../contracts/browser-check.ts';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';
import { createStoredTask } from '../support/task-items.ts';

/**
 * The console's task page shows a browser check's screenshots, the target's beside the source's,
 * fetched through the API with the signed-in person's token: a finished git deploy whose item
 * carries a browser check, with both pictures stored as the activity stores them.
 */
let h: Harness;
let browser: Browser;
let page: Page;
const WAIT = { timeout: 15_000 };

/** A PNG of one colour, `width` wide, to tell the two apart by size. */
function png(width: number, rgb: [number, number, number]): Buffer {
  const img = new PNG({ width, height: 60 });
  for (let i = 0; i < img.data.length; i += 4) [img.data[i], img.data[i + 1], img.data[i + 2], img.data[i + 3]] = [...rgb, 255];
  return PNG.sync.write(img);
}

beforeAll(async () => {
  [h, browser] = await Promise.all([createHarness(), launchBrowser()]);
  ({ page } = await openPage(browser, h.baseUrl));
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the task page', () => {
  it("shows the browser check's verdict and the target's screenshot beside the source's", { timeout: 120_000 }, async () => {
    const { stores } = h.boot.context;
    const id = randomUUID();
    await createStoredTask(h, { type: 'git_deploy', id, summary: 'deploying a dashboard' });
    const target = await stores.browserScreenshots.save({ taskId: id, dashboardId: 42, side: 'target', png: png(320, [200, 30, 30]) });
    const source = await stores.browserScreenshots.save({ taskId: id, dashboardId: 42, side: 'source', png: png(240, [30, 160, 60]) });
    const check: BrowserCheck = {
      verdict: 'failed',
      reason: "1 chart(s) do not render in the target but do in the source: 'sales'",
      charts: [{ name: 'sales', state: 'error', message: 'no such column: units', source_state: 'ok' }],
      target_screenshot_id: target,
      source_screenshot_id: source,
      duration_ms: 4200,
    };
    const item = {
      kind: 'repository',
      id: 'd1',
      title: 'Sales',
      status: 'deployed_with_errors',
      outcome: 'failed',
      next_actions: [],
      verification: { ok: false, browser: check },
    };
    await stores.tasks.finish(
      id,
      'FAILED',
      { items: [item], not_started: 0, cancelled: false, next_actions: [] },
      { message: 'deployed, but the browser check failed' },
    );

    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/tasks/${id}`);
    const section = page.getByTestId('browser-check');
    await expect
      .poll(() => section.getByText("1 chart(s) do not render in the target but do in the source: 'sales'").count(), WAIT)
      .toBe(1);
    await expect.poll(() => section.getByText('failed', { exact: true }).count(), WAIT).toBe(1);
    const width = (side: string) =>
      page
        .getByTestId(`screenshot-${side}`)
        .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)
        .catch(() => 0);
    await expect.poll(() => width('target'), WAIT).toBe(320);
    await expect.poll(() => width('source'), WAIT).toBe(240);
    // Side by side: the source's picture starts to the right of the target's, on the same row.
    const [t, s] = await Promise.all([
      page.getByTestId('screenshot-target').boundingBox(),
      page.getByTestId('screenshot-source').boundingBox(),
    ]);
    expect(s!.x).toBeGreaterThan(t!.x + t!.width - 1);
    expect(Math.abs(s!.y - t!.y)).toBeLessThan(5);
  });

  it('tells a reader who is not the requester nor an admin why the screenshots are not shown', { timeout: 120_000 }, async () => {
    const { stores } = h.boot.context;
    const id = randomUUID();
    await createStoredTask(h, { type: 'git_deploy', id, summary: 'deploying a dashboard' });
    const target = await stores.browserScreenshots.save({ taskId: id, dashboardId: 7, side: 'target', png: png(320, [200, 30, 30]) });
    const check: BrowserCheck = { verdict: 'passes', charts: [], target_screenshot_id: target, duration_ms: 1000 };
    const item = {
      kind: 'repository',
      id: 'd7',
      title: 'Ops',
      status: 'deployed',
      outcome: 'succeeded',
      next_actions: [],
      verification: { ok: true, browser: check },
    };
    await stores.tasks.finish(id, 'SUCCEEDED', { items: [item], not_started: 0, cancelled: false, next_actions: [] }, null);
    const viewer = `viewer-${id.slice(0, 8)}`;
    const password = `pw-${viewer}-0123456789`;
    const made = await h.request('POST', '/api/admin/users', {
      token: h.adminToken,
      json: { username: viewer, password, roles: ['Viewer'] },
    });
    expect(made.status, made.text).toBe(201);
    const other = await openPage(browser, h.baseUrl);
    try {
      await signIn(other.page, viewer, password);
      await other.page.goto(`/tasks/${id}`);
      await expect.poll(() => other.page.getByTestId('screenshot-target-hidden').count(), WAIT).toBe(1);
      expect(await other.page.getByTestId('screenshot-target-hidden').textContent()).toContain(
        'Only the person who requested the task and admins',
      );
      expect(await other.page.getByTestId('screenshot-target').count()).toBe(0);
    } finally {
      await other.page.context().close();
    }
  });

  it('shows an approver the rules and database mappings a task will apply, with their digest', { timeout: 120_000 }, async () => {
    const id = randomUUID();
    await createStoredTask(h, { type: 'migration', id, summary: 'migrating into prod' });
    const frozen = {
      source_env_id: 'dev',
      target_env_id: 'prod',
      rules: [{ id: 'r1', kind: 'schema', from: 'analytics_dev', to: 'analytics' }],
      db_mappings: [{ source_database_id: 3, source_database_name: 'examples', source_database_uuid: null, target_database_id: 9 }],
      digest: 'ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12',
    };
    // As the task service writes a gated task's input (api/tasks/service.ts): the gate and the frozen pair.
    await h
      .knex('tasks')
      .where({ id })
      .update({
        workflow_input: JSON.stringify({ approval: { required: true, requestedBy: null, timeoutSeconds: 3600, envId: 'prod' }, frozen }),
      });
    // The first case signed this page in already.
    await page.goto(`/tasks/${id}`);
    const settings = page.getByTestId('approval-settings');
    await expect.poll(() => settings.count(), WAIT).toBe(1);
    expect(await settings.textContent()).toContain('ab12cd34ef56ab12');
    expect(await page.getByTestId('approval-rules').textContent()).toMatch(/schema.*analytics_dev.*→.*analytics/);
    expect(await page.getByTestId('approval-mappings').textContent()).toMatch(/examples.*→.*#9/);
  });
});
