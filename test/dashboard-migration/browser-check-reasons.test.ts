// Why the fake: a Superset whose frontend is not served, which the real instances always serve.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDashboard } from '../../activities/browser-check/check.ts';
import { chromiumPool } from '../../lib/browser-check/chromium.ts';
import { CHROMIUM } from '../web/browser.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * What keeps the browser check from rendering a dashboard is its `not_verifiable` reason, never a
 * failure and never a thrown error: no Chromium where BROWSER_CHECK_CHROMIUM says, a Superset whose
 * frontend is not served (the in-process fake answers the REST API only), a host nothing answers on.
 */
let h: Harness;
let fake: FakeSuperset;
let apiOnly: string;
let nobody: string;
const log = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset()]);
  apiOnly = await createEnvironment(h, { baseUrl: fake.baseUrl, username: 'admin', password: 'admin' });
  // Port 9 (discard) on loopback: nothing listens there, and Chromium refuses it outright.
  nobody = await createEnvironment(h, { baseUrl: 'http://127.0.0.1:9', username: 'admin', password: 'admin' });
}, 60_000);
afterAll(async () => {
  await fake?.close();
  await h?.close();
});

const services = (executablePath: string) => {
  const { stores, keyring, config } = h.boot.context;
  return {
    deps: { stores, keyring, config: { ...config, BROWSER_CHECK_BUDGET_SECONDS: 20 } },
    pool: chromiumPool({ executablePath, pages: 1 }),
  };
};

describe('the browser check when it cannot render', () => {
  it('names a missing Chromium', async () => {
    const svc = services('/nonexistent/chromium');
    const r = await checkDashboard(svc, { taskId: 't', targetEnvId: apiOnly, dashboardId: 1 }, log);
    expect(r).toMatchObject({ verdict: 'not_verifiable', charts: [] });
    expect(r.reason).toMatch(/Chromium is not installed at \/nonexistent\/chromium/);
    expect(r).not.toHaveProperty('target_screenshot_id');
  });

  it('names a Superset whose frontend is not served, and one nothing answers for', { timeout: 60_000 }, async () => {
    const svc = services(CHROMIUM);
    try {
      const api = await checkDashboard(svc, { taskId: 't', targetEnvId: apiOnly, dashboardId: 1 }, log);
      expect(api.verdict).toBe('not_verifiable');
      // The first page a context opens is the login page (its sign-in comes before any dashboard).
      expect(api.reason).toMatch(/Superset's frontend answered 4\d\d for the login page/);
      const none = await checkDashboard(svc, { taskId: 't', targetEnvId: nobody, dashboardId: 1 }, log);
      expect(none.verdict).toBe('not_verifiable');
      expect(none.reason).toMatch(/Superset's frontend at http:\/\/127\.0\.0\.1:9 could not be reached/);
    } finally {
      await svc.pool.close();
    }
  });
});
