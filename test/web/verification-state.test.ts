import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardOutcome, MigrationResult, VerificationState } from '../../contracts/migration.ts';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { createStoredTask } from '../support/task-items.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';
import { migrationTotals } from '../support/migration-totals.ts';

/**
 * The console's task page says what a migration's rerun checked (issue 50): a dashboard whose
 * target this task checked again reads `verified` with its time, one carried from an earlier
 * task (`verification: "if_changed"`) reads `carried` with that task and its reason. Finished
 * migrations stored as the workflow stores them (a lone item is open from the start).
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

function unchanged(state: VerificationState): DashboardOutcome {
  return {
    kind: 'dashboard',
    id: 7,
    title: 'Sales',
    status: 'unchanged',
    outcome: 'succeeded',
    target_dashboard_id: 70,
    dashboard_uuid: randomUUID(),
    objects: [
      { kind: 'dashboard', file: 'dashboards/Sales_70.yaml', name: 'Sales', uuid: randomUUID(), action: 'unchanged', target_id: 70 },
    ],
    database_mappings: [],
    collisions: [],
    dropped_fields: [],
    defaulted_fields: [],
    learned_rejections: [],
    chart_uuids: [],
    import_attempts: 0,
    next_actions: [],
    verification_state: state,
  };
}

/** A finished migration task holding this one item; its id. */
async function storedMigration(item: DashboardOutcome): Promise<string> {
  const id = await createStoredTask(h, { type: 'migration', summary: 'rerun' });
  const result: MigrationResult = {
    dry_run: false,
    source_env_id: randomUUID(),
    target_env_id: randomUUID(),
    totals: migrationTotals({ requested: 1, processed: 1, unchanged: 1 }),
    items: [item],
    not_started: 0,
    cancelled: false,
    next_actions: [],
  };
  await h.boot.context.stores.tasks.finish(id, 'SUCCEEDED', result, null);
  return id;
}

describe('the task page', () => {
  it("shows each dashboard's verification state: verified by this task, or carried from an earlier one", { timeout: 120_000 }, async () => {
    const earlier = randomUUID();
    const at = '2026-12-01T10:00:00.000Z';
    const verified = await storedMigration(unchanged({ state: 'verified', at, task_id: null, checked: 'unchanged_target' }));
    const carried = await storedMigration(
      unchanged({
        state: 'carried',
        from_task_id: earlier,
        at,
        reason: `verification "if_changed": unchanged since task ${earlier}'s verification passed`,
      }),
    );

    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/tasks/${verified}`);
    const state = page.getByTestId('verification-state');
    await expect.poll(() => state.getAttribute('data-state'), WAIT).toBe('verified');
    expect(await state.innerText()).toContain('checked its target again');

    await page.goto(`/tasks/${carried}`);
    await expect.poll(() => state.getAttribute('data-state'), WAIT).toBe('carried');
    expect(await state.innerText()).toContain(`from task ${earlier}`);
    expect(await state.innerText()).toContain('if_changed');
  });
});
