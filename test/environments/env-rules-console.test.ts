// Why the fake: incidental: no Superset answer is asserted; the fake is only a registered environment.
// The console's per-environment rules, in a real browser (Debian's Chromium) against the real API:
// pick a pair under Environments, add a rule, see it listed, see a refused one said so, remove it.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { launchBrowser, openPage, screenshot, signIn } from '../web/browser.ts';

let h: Harness;
let fake: FakeSuperset;
let browser: Browser;
let page: Page;
let errors: string[];
let dev: string;
let prod: string;
const WAIT = { timeout: 15_000 };

beforeAll(async () => {
  [h, fake, browser] = await Promise.all([createHarness(), startFakeSuperset(), launchBrowser()]);
  const conn = { baseUrl: fake.baseUrl, username: fake.username, password: fake.password };
  dev = await createEnvironment(h, { ...conn, name: 'rules-dev' });
  prod = await createEnvironment(h, { ...conn, name: 'rules-prod' });
  ({ page, errors } = await openPage(browser, h.baseUrl));
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await fake?.close();
  await h?.close();
});

async function pick(label: 'Source' | 'Target', name: string) {
  const section = page.getByTestId('env-rules');
  await section.getByLabel(label, { exact: true }).first().click();
  await page.getByRole('option', { name }).click();
}

describe('per-environment rules in the console', () => {
  it('adds a rule to a pair, lists it, says why another is refused, and removes it', async () => {
    await signIn(page, ADMIN.username, ADMIN.password);
    await page.getByRole('link', { name: 'Environments' }).click();
    const section = page.getByTestId('env-rules');
    await section.waitFor();
    await pick('Source', 'rules-dev');
    await pick('Target', 'rules-prod');
    await section.getByLabel(/^From/).fill('analytics_dev');
    await section.getByLabel(/^To/).fill('analytics');
    await section.getByRole('button', { name: 'Add rule' }).click();
    const table = section.getByRole('table', { name: 'Per-environment rules' });
    await expect.poll(() => table.textContent(), WAIT).toContain('analytics_dev');
    const stored = await h.request('GET', `/api/environments/${dev}/rules/${prod}`, { token: h.adminToken });
    expect(stored.body.items).toEqual([expect.objectContaining({ kind: 'schema', from: 'analytics_dev', to: 'analytics' })]);
    await screenshot(page, 'environment-rules');

    // The same rule again: the API's 409 is shown, nothing is added.
    await section.getByLabel(/^From/).fill('analytics_dev');
    await section.getByLabel(/^To/).fill('other');
    await section.getByRole('button', { name: 'Add rule' }).click();
    await expect.poll(() => section.textContent(), WAIT).toMatch(/already has a schema rule/);
    expect((await h.request('GET', `/api/environments/${dev}/rules/${prod}`, { token: h.adminToken })).body.items).toHaveLength(1);

    await section.getByRole('button', { name: 'Delete analytics_dev' }).click();
    await expect
      .poll(async () => (await h.request('GET', `/api/environments/${dev}/rules/${prod}`, { token: h.adminToken })).body.items.length, WAIT)
      .toBe(0);
    await expect.poll(() => table.textContent(), WAIT).not.toContain('analytics_dev');
    expect(errors.filter((e) => !/409|Conflict/.test(e))).toEqual([]);
  }, 120_000);
});
