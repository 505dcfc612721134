// The dashboards grid against a real Superset 6.1.0 with thumbnails off (its default: the
// THUMBNAILS feature flag): each card says so, offers no Retry, the browser logs no error, and
// thumbnails are asked for only as cards scroll into view.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { supersets } from '../support/environments.ts';
import { createDashboard } from '../support/superset/fixtures.ts';
import { client, registerEnvironment } from '../dashboard-migration/support.ts';
import { launchBrowser, openPage, signIn } from './browser.ts';

const run = supersets() !== null;
const P = `thoff${Date.now().toString(36)}`;
const WAIT = { timeout: 20_000 };
let h: Harness;
let browser: Browser;
let page: Page;
let errors: string[];
let env: string;

beforeAll(async () => {
  if (!run) return;
  [h, browser] = await Promise.all([createHarness(), launchBrowser()]);
  const c = await client('a');
  for (let i = 0; i < 24; i++) await createDashboard(c, { title: `${P} board ${String(i).padStart(2, '0')}`, slug: `${P}-${i}` });
  env = await registerEnvironment(h, 'a', `${P}-a`);
  ({ page, errors } = await openPage(browser, h.baseUrl, { width: 1280, height: 700 }));
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe.skipIf(!run)('dashboards grid, thumbnails off', () => {
  it('says thumbnails are off, offers no Retry, logs no console error, and loads thumbnails lazily', { timeout: 180_000 }, async () => {
    const asked = new Set<string>();
    page.on('request', (r) => r.url().includes('/thumbnail?') && asked.add(r.url()));
    await signIn(page, ADMIN.username, ADMIN.password);
    await page.goto(`/dashboards?env=${env}&q=${P}`);
    await expect.poll(() => page.getByTestId('dashboard-card').count(), WAIT).toBe(24);
    await expect.poll(() => page.getByText('Thumbnails are off in this Superset').count(), WAIT).toBeGreaterThan(0);
    // only the cards near the viewport were asked for
    const first = asked.size;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(24);
    // scrolling brings the rest
    for (const card of await page.getByTestId('dashboard-card').all()) await card.scrollIntoViewIfNeeded();
    await expect.poll(() => page.getByText('Thumbnails are off in this Superset').count(), WAIT).toBe(24);
    expect(asked.size).toBe(24);
    expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(await page.getByText(/HTTP \d+/).count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
