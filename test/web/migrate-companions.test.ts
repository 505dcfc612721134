/**
 * The console's migrate wizard with companions and per-environment rules, in Chromium against the
 * real API, a worker and real Superset a (6.1.0) → b (6.1.0 without ALERT_REPORTS): the mapping
 * step shows the pair's rules and a mode per companion kind (defaults the API's); a changed mode
 * is what the request sends; the dry run's dashboard lists its companions per kind (a kind with
 * nothing around the dashboard too) and what each rule did (one that matched nothing says so).
 */
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COMPANION_KINDS } from '../../contracts/companions.ts';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { supersets } from '../support/environments.ts';
import { createSqliteDatabase } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, type SourceFixture } from '../dashboard-migration/support.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';

const P = `mc${Date.now().toString(36)}`;
const WAIT = { timeout: 20_000 };

describe.runIf(supersets() !== null)('the migrate wizard with companions and rules (real Superset a → b)', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let src: SourceFixture;
  let envA: string;
  let envB: string;

  beforeAll(async () => {
    [h, browser] = await Promise.all([createHarness({ worker: true }), launchBrowser()]);
    ({ page, errors } = await openPage(browser, h.baseUrl));
    const [a, b] = await Promise.all([client('a'), client('b')]);
    const dir = path.join(inject('runDir'), P);
    src = await buildSource(a, P, dir, { dashboards: 1 });
    [envA, envB] = await Promise.all([registerEnvironment(h, 'a', `${P}-a`), registerEnvironment(h, 'b', `${P}-b`)]);
    const targetDb = await createSqliteDatabase(b, {
      name: `${P}_warehouse`,
      path: path.join(dir, `${P}-b.db`),
      tables: prefixedTables(P),
    });
    const mapped = await h.request('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
      token: h.adminToken,
      json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
    });
    expect(mapped.status, mapped.text).toBe(200);
    const rule = await h.request('POST', `/api/environments/${envA}/rules/${envB}`, {
      token: h.adminToken,
      json: { kind: 'text', from: 'https://superset-dev.example.com', to: 'https://superset.example.com' },
    });
    expect(rule.status, rule.text).toBe(201);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('sends the chosen modes, and the dry run shows companions per kind and each rule’s effect', { timeout: 240_000 }, async () => {
    const d = src.dashboards[0];
    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/migrate?source=${envA}&target=${envB}`);
    await page.getByRole('combobox', { name: 'Dashboards' }).fill(d.title);
    await page.getByRole('option', { name: d.title }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Next' }).click();

    // the pair's rule is shown before anything runs, and every kind has its mode (roles strict by default)
    await expect
      .poll(() => page.getByTestId('pair-rule').allTextContents(), WAIT)
      .toEqual(['text https://superset-dev.example.com → https://superset.example.com']);
    const modes = page.getByRole('table', { name: 'Companion modes' });
    expect(await modes.getByRole('row').count()).toBe(COMPANION_KINDS.length);
    const roles = modes.getByRole('radiogroup', { name: 'roles' });
    expect(await roles.getByRole('radio', { name: 'strict' }).isChecked()).toBe(true);
    await roles.getByText('copy', { exact: true }).click();
    await modes.getByRole('radiogroup', { name: 'tags' }).getByText('ignore', { exact: true }).click();
    await page.getByLabel('Copied alerts and reports start paused in the target').uncheck();
    await page.getByLabel("An embedded configuration allowing any domain replaces the target's allowed domains").check();

    const sent = page.waitForRequest((r: Request) => r.url().endsWith('/api/dashboards/migrate') && r.method() === 'POST');
    await page.getByRole('button', { name: 'Dry run' }).click();
    const body = (await sent).postDataJSON() as { dry_run: boolean; companions?: Record<string, unknown> };
    expect(body.dry_run).toBe(true);
    expect(body.companions).toEqual({ roles: 'copy', tags: 'ignore', pause_reports: false, embedded_any_domain: true });

    // the lone dashboard of the dry run is open: its companions, kind by kind
    await expect.poll(() => page.getByTestId('companions').count(), { timeout: 120_000 }).toBe(1);
    const kinds = await page
      .locator('[data-testid="companions"] tr[data-kind]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
    expect(new Set(kinds)).toEqual(
      new Set([
        'owners',
        'roles',
        'tags',
        'reports',
        'annotation_layers',
        'css_templates',
        'saved_queries',
        'certification',
        'themes',
        'embedded',
      ]),
    );
    // a kind with nothing around the dashboard still shows it was looked at; owners are people with an action each
    expect(await page.locator('[data-testid="companions"] tr[data-kind="reports"]').textContent()).toContain('none around this dashboard');
    const owners = await page.locator('[data-testid="companions"] tr[data-testid="companion-item"][data-kind="owners"]').allTextContents();
    expect(owners.length, owners.join(' | ')).toBeGreaterThan(0);
    expect(owners.join(' ')).toMatch(/create|update|unchanged|missing/);
    expect(await page.locator('[data-testid="companions"] tr[data-kind="tags"]').first().textContent()).toContain('ignore');
    // the rule fits nothing in this dashboard, and the page says so rather than hiding it
    expect(await page.getByTestId('env-rule-effects').textContent()).toContain('https://superset-dev.example.com');
    expect(errors).toEqual([]);
  });
});
