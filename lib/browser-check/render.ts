/**
 * Opens one Superset dashboard in headless Chromium as a person would and reads each chart's
 * rendered state from Superset's own page, then takes a screenshot.
 *
 * Sign-in: Superset's login page (`/login/`) posts its form (username, password and the page's
 * csrf_token) and gets Flask's session cookie; the API's JWT does not sign a browser in.
 *
 * Confinement: the page is whatever the Superset serves, so it is held to that Superset's origin
 * (scheme, host and port) and nothing else is fetched. The context's only way out is its own
 * loopback proxy (./origin-proxy.ts), which lets through that origin alone, after the egress
 * policy: every request Chromium makes (redirect hops, frames, fetches, WebSockets, workers) goes
 * there. Service workers are blocked, off-origin WebSockets closed and off-origin first requests
 * aborted in the context as well, so a page's attempt fails at once instead of at the proxy.
 *
 * What "done" means, from Superset 6.x's frontend (the same on 6.0.0 and 6.1.0, whose production
 * build strips `data-test` but keeps these): every `.dashboard-component-chart-holder` holds either
 * an error alert (`[role="alert"]`, Chart's failed state) or a drawn `.slice_container` without the
 * `.loading[role="status"]` spinner (Chart's loading state and charts outside the viewport). Each
 * chart's id and name come from `[data-test-chart-id]` / `data-test-chart-name`.
 */
import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { EgressPolicy } from '../egress/policy.ts';
import { BrowserUnavailableError, type ChromiumPool } from './chromium.ts';
import { startOriginProxy } from './origin-proxy.ts';

/** One chart as the page showed it: drawn, an error alert (its text), or still loading when the budget ran out. */
export interface RenderedChart {
  id: number;
  name: string;
  state: 'ok' | 'error' | 'loading';
  message?: string;
}

export interface DashboardPage {
  baseUrl: string;
  username: string;
  password: string;
  verifyTls?: boolean;
  dashboardId: number;
  /** ALLOWED_UPSTREAM_HOSTS (lib/egress): the context's proxy connects to the Superset through it. */
  egress?: EgressPolicy;
}

export interface Rendered {
  charts: RenderedChart[];
  png: Buffer;
}

/** Read in the page: each chart holder's id, name, state and error text. A string, so the worker's types need no DOM. */
const READ_CHARTS = `(() => [...document.querySelectorAll('.dashboard-component-chart-holder')].map((h) => {
  const slice = h.querySelector('[data-test-chart-id]');
  const alert = h.querySelector('[role="alert"]');
  const spinner = h.querySelector('.loading[role="status"]');
  const drawn = h.querySelector('.slice_container');
  if (!alert && (!drawn || spinner)) h.scrollIntoView({ block: 'center' });
  const text = alert ? ((alert.querySelector('.ant-alert-description') || alert).textContent || '').trim() : undefined;
  return { id: Number(slice ? slice.getAttribute('data-test-chart-id') : 0), name: (slice && slice.getAttribute('data-test-chart-name')) || '', state: alert ? 'error' : drawn && !spinner ? 'ok' : 'loading', message: text };
}))()`;

/** Whether Superset's dashboard grid is on the page (a dashboard without charts is done once it is). */
const GRID_SHOWN = `!!document.querySelector('.grid-container, .dashboard-content')`;

const POLL_MS = 500;

/**
 * Opens the dashboard in the account's kept context (signing in through the login page when
 * Superset sends the browser there: the first time, or once the session ended) and waits until
 * every chart is done or `budgetMs` has passed (charts still loading then are reported `loading`).
 * Throws BrowserUnavailableError when Superset's frontend cannot be reached or refuses the sign-in.
 */
export async function renderDashboard(pool: ChromiumPool, target: DashboardPage, budgetMs: number): Promise<Rendered> {
  const base = new URL(target.baseUrl.endsWith('/') ? target.baseUrl : `${target.baseUrl}/`);
  // One context per account: a changed password or TLS setting is another one.
  const key = createHash('sha256')
    .update(JSON.stringify([base.href, target.username, target.password, target.verifyTls !== false]))
    .digest('hex');
  return pool.withPage(
    key,
    (browser) => confinedContext(browser, base, target.verifyTls !== false, target.egress ?? EgressPolicy.OPEN),
    async (page) => {
      const deadline = Date.now() + budgetMs;
      page.setDefaultTimeout(Math.max(1000, budgetMs));
      const url = new URL(`superset/dashboard/${target.dashboardId}/?standalone=1`, base);
      const login = new URL('login/', base);
      const onLoginPage = () => new URL(page.url()).pathname.startsWith(login.pathname);
      await contextSignedIn(page, login, target);
      await reach(page, url, 'the dashboard');
      // Sent to the login page all the same: the context's session ended. Pages of one context sign
      // in again one at a time (a second sign-in would post the first one's stale CSRF token).
      for (let attempt = 0; onLoginPage() && attempt < 2; attempt++) {
        await signedIn(page.context(), () => signIn(page, login, target));
        await reach(page, url, 'the dashboard');
      }
      if (onLoginPage()) throw new BrowserUnavailableError(`Superset at ${base.origin} sent the signed-in browser back to its login page`);
      const charts = await waitForCharts(page, deadline, budgetMs);
      // Let the last drawn charts paint (animations, fonts) before the picture; never past the budget.
      // expected: the charts were counted already; a page still busy at the budget is pictured as it is.
      await page.waitForLoadState('networkidle', { timeout: Math.max(1, Math.min(3000, deadline - Date.now())) }).catch(() => undefined);
      const png = await page.screenshot({ fullPage: true, timeout: 30_000 });
      return { charts, png };
    },
  );
}

/** A context whose pages reach the Superset's own origin only (its session cookie goes nowhere else). */
async function confinedContext(browser: Browser, base: URL, verifyTls: boolean, egress: EgressPolicy): Promise<BrowserContext> {
  const proxy = await startOriginProxy(base, egress);
  try {
    const context = await browser.newContext({
      viewport: { width: 1400, height: 1000 },
      ignoreHTTPSErrors: !verifyTls,
      locale: 'en-US',
      serviceWorkers: 'block',
      // '<-loopback>': Chromium sends loopback straight out otherwise, and the Superset may be on it.
      proxy: { server: proxy.server, bypass: '<-loopback>' },
    });
    context.once('close', () => proxy.close());
    await context.route('**/*', (route) =>
      new URL(route.request().url()).origin === base.origin ? route.continue() : route.abort('blockedbyclient'),
    );
    const socketOrigin = new URL(base.href.replace(/^http/, 'ws')).origin;
    await context.routeWebSocket(
      (url) => url.origin !== socketOrigin,
      (ws) => ws.close(),
    );
    return context;
  } catch (err) {
    proxy.close();
    throw err;
  }
}

/**
 * Per context, its first sign-in, which each of its pages awaits before it opens anything. Superset
 * answers every visit to its login page with a new session cookie (holding the page's CSRF token),
 * and a context's pages share one cookie jar: a page sent to the login page while another signs in
 * replaced the cookie that sign-in posted with (Superset then refused it, 302 back to the login
 * page), or, landing after it, signed the context out again. A failed sign-in is not kept: the next
 * page tries again.
 */
const contextsSignedIn = new WeakMap<BrowserContext, Promise<void>>();

function contextSignedIn(page: Page, login: URL, who: DashboardPage): Promise<void> {
  const context = page.context();
  let done = contextsSignedIn.get(context);
  if (!done) {
    // Through the same one-at-a-time flight as a later sign-in: the two never overlap.
    done = signedIn(context, () => signIn(page, login, who));
    contextsSignedIn.set(context, done);
    done.catch(() => {
      // expected: a failed sign-in is only forgotten here; the page awaiting it meets the error.
      if (contextsSignedIn.get(context) === done) contextsSignedIn.delete(context);
    });
  }
  return done;
}

/** Sign-ins in flight, per context: a page sent to the login page later (its session ended) waits for that one. */
const signingIn = new WeakMap<BrowserContext, Promise<void>>();

function signedIn(context: BrowserContext, signIn: () => Promise<void>): Promise<void> {
  const flight = signingIn.get(context);
  // expected: the page that started the sign-in meets its failure; this one then finds the login page and signs in itself.
  if (flight) return flight.catch(() => undefined);
  const started = signIn().finally(() => signingIn.delete(context));
  signingIn.set(context, started);
  return started;
}

/** Superset's login page, as its form posts it: username, password and the page's CSRF token. */
async function signIn(page: Page, login: URL, who: DashboardPage): Promise<void> {
  await reach(page, login, 'the login page');
  // Already signed in (another page's sign-in finished meanwhile): Superset sends it on.
  if (!new URL(page.url()).pathname.startsWith(login.pathname)) return;
  const csrf = await page
    .locator('input[name="csrf_token"]')
    .first()
    .inputValue({ timeout: 10_000 })
    // expected: a login page without a CSRF field is posted without one (Superset then answers for itself).
    .catch(() => '');
  const res = await page.request.post(login.href, {
    form: { username: who.username, password: who.password, ...(csrf ? { csrf_token: csrf } : {}) },
    maxRedirects: 0,
    failOnStatusCode: false,
  });
  const to = res.headers()['location'];
  if (res.status() >= 500)
    throw new BrowserUnavailableError(`Superset's login page at ${login.href} answered ${res.status()} to the sign-in`);
  if (res.status() !== 302 || !to || new URL(to, login).pathname.startsWith(login.pathname))
    throw new BrowserUnavailableError(
      `Superset's login page at ${login.href} did not accept the environment's credentials (answered ${res.status()})`,
    );
}

async function reach(page: Page, url: URL, what: string): Promise<void> {
  let status: number | undefined;
  try {
    status = (await page.goto(url.href, { waitUntil: 'domcontentloaded' }))?.status();
  } catch (err) {
    throw new BrowserUnavailableError(
      `Superset's frontend at ${url.origin} could not be reached (${what}): ${(err as Error).message.split('\n')[0]}`,
    );
  }
  if (status !== undefined && status >= 400)
    throw new BrowserUnavailableError(`Superset's frontend answered ${status} for ${what} (${url.pathname})`);
}

/** Polls the page until each chart holder is done (or the deadline passes); a dashboard without charts is done once its grid shows. */
async function waitForCharts(page: Page, deadline: number, budgetMs: number): Promise<RenderedChart[]> {
  let charts: RenderedChart[] = [];
  let emptyPolls = 0;
  while (Date.now() < deadline) {
    charts = (await page.evaluate(READ_CHARTS)) as RenderedChart[];
    if (charts.length && charts.every((c) => c.state !== 'loading')) return charts.map(clean);
    if (!charts.length && (await page.evaluate(GRID_SHOWN)) && ++emptyPolls >= 4) return [];
    await page.waitForTimeout(POLL_MS);
  }
  if (!charts.length)
    throw new BrowserUnavailableError(`the dashboard showed neither charts nor its grid within ${Math.round(budgetMs / 1000)} s`);
  return charts.map((c) =>
    c.state === 'loading' ? { ...clean(c), message: `still loading after ${Math.round(budgetMs / 1000)} s` } : clean(c),
  );
}

function clean(c: RenderedChart): RenderedChart {
  return { id: c.id, name: c.name, state: c.state, ...(c.message ? { message: c.message.slice(0, 1000) } : {}) };
}
