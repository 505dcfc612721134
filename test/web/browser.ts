import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { expect, inject } from 'vitest';
import { buildWeb } from '../../scripts/build-web.ts';

/** Debian's Chromium (apt), never a downloaded browser. */
export const CHROMIUM = process.env.SWITCHYARD_TEST_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  await buildWeb({ ifStale: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A page that remembers every console error and uncaught exception, for the "no console errors" check. */
export async function openPage(browser: Browser, baseUrl: string, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ baseURL: baseUrl, viewport, locale: 'en-US' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors };
}

export async function signIn(page: Page, username: string, password: string) {
  await page.goto('/');
  await page.getByLabel(/^Username/).fill(username);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 15_000 }).toBe(username);
}

/**
 * Saves a screenshot under the run directory (and, with SWITCHYARD_SCREENSHOTS=<dir>, there too,
 * which is how docs/screenshots/ is refreshed) and checks it is not blank: a rendered page has
 * many colours, an empty or failed one a handful.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = path.join(inject('runDir'), 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  const png = await page.screenshot({ path: file, fullPage: true });
  if (process.env.SWITCHYARD_SCREENSHOTS) fs.copyFileSync(file, path.join(process.env.SWITCHYARD_SCREENSHOTS, `${name}.png`));
  expect(distinctColours(png), `${name} looks blank`).toBeGreaterThan(16);
  return file;
}

export function distinctColours(png: Buffer): number {
  const { data } = PNG.sync.read(png);
  const seen = new Set<number>();
  for (let i = 0; i < data.length && seen.size <= 1000; i += 4) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
  return seen.size;
}
