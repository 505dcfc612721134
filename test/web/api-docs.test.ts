// /api/docs runs under the web console's Content-Security-Policy (no inline script anywhere) and
// Swagger UI still starts and renders the API's document in a real browser (Debian's Chromium).
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../api/http/web-console.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { CHROMIUM } from './browser.ts';

let h: Harness;
let browser: Browser;
beforeAll(async () => {
  [h, browser] = await Promise.all([
    createHarness(),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('/api/docs', () => {
  it("sends the console's Content-Security-Policy and no inline script", async () => {
    const r = await h.request('GET', '/api/docs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toMatch(/default-src 'self'/);
    // No script-src of its own: scripts fall back to default-src 'self' (files of this origin only).
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/script-src/);
    // Every script is a file of this origin.
    const scripts = r.text.match(/<script[^>]*>[^<]*<\/script>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/^<script src="\/api\/docs\/assets\/[a-z-]+\.js"><\/script>$/);
    const start = await h.request('GET', '/api/docs/assets/docs-start.js');
    expect(start.status).toBe(200);
    expect(start.headers.get('content-type')).toContain('javascript');
  });

  it('starts Swagger UI on the API document under that policy, with no CSP violation or script error', async () => {
    const context = await browser.newContext({ baseURL: h.baseUrl });
    const page = await context.newPage();
    const errors: string[] = [];
    // Chromium asks for /favicon.ico on its own; the API has none.
    page.on('console', (m) => m.type() === 'error' && !m.location().url.endsWith('/favicon.ico') && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    const violations: string[] = [];
    await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
    // Runs in the page (no DOM types in this project's tsconfig, hence the loose typing).
    await page.addInitScript(() => {
      const w = globalThis as unknown as {
        document: { addEventListener(type: string, fn: (e: { violatedDirective: string; blockedURI: string }) => void): void };
        reportViolation(v: string): void;
      };
      w.document.addEventListener('securitypolicyviolation', (e) => w.reportViolation(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const res = await page.goto('/api/docs');
    expect(res?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    await expect.poll(() => page.locator('.swagger-ui .info .title').textContent(), { timeout: 30_000 }).toContain('Switchyard API');
    await expect.poll(() => page.locator('.opblock-summary-path[data-path="/api/health"]').count(), { timeout: 30_000 }).toBe(1);
    // Swagger UI loaded the whole document through its own fetch (connect-src 'self').
    const operations = await page.evaluate(
      () => (globalThis as unknown as { ui: { specSelectors: { operations(): { size: number } } } }).ui.specSelectors.operations().size,
    );
    expect(operations).toBeGreaterThan(100);
    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
