/**
 * Opens one Superset dashboard in headless Chromium as a person would and reads each chart's
 * rendered state from Superset's own page, then takes a screenshot.
 *
 * Sign-in: Superset's login page (`/login/`) posts its form (username, password and the page's
 * csrf_token) and gets Flask's session cookie; the API's JWT does not sign a browser in. The
 * page's requests are held to the Superset's own origin: nothing else is fetched, and the cookie
 * goes nowhere else.
 *
 * What "done" means, from Superset 6.x's frontend (the same on 6.0.0 and 6.1.0, whose production
 * build strips `data-test` but keeps these): every `.dashboard-component-chart-holder` holds either
 * an error alert (`[role="alert"]`, Chart's failed state) or a drawn `.slice_container` without the
 * `.loading[role="status"]` spinner (Chart's loading state and charts outside the viewport). Each
 * chart's id and name come from `[data-test-chart-id]` / `data-test-chart-name`.
 */
import type { Browser, Page } from 'playwright-core';
import { BrowserUnavailableError } from './chromium.ts';

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
 * Signs in, opens the dashboard and waits until every chart is done or `budgetMs` has passed
 * (charts still loading then are reported `loading`). Throws BrowserUnavailableError when
 * Superset's frontend cannot be reached or refuses the sign-in.
 */
export async function renderDashboard(browser: Browser, target: DashboardPage, budgetMs: number): Promise<Rendered> {
  const base = new URL(target.baseUrl.endsWith('/') ? target.baseUrl : `${target.baseUrl}/`);
  const deadline = Date.now() + budgetMs;
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, ignoreHTTPSErrors: target.verifyTls === false, locale: 'en-US' });
  try {
    await context.route('**/*', (route) => (new URL(route.request().url()).origin === base.origin ? route.continue() : route.abort('blockedbyclient')));
    const page = await context.newPage();
    page.setDefaultTimeout(Math.max(1000, budgetMs));
    await signIn(page, base, target);
    const url = new URL(`superset/dashboard/${target.dashboardId}/?standalone=1`, base);
    await reach(page, url, 'the dashboard');
    if (new URL(page.url()).pathname.startsWith(new URL('login/', base).pathname))
      throw new BrowserUnavailableError(`Superset at ${base.origin} sent the signed-in browser back to its login page`);
    const charts = await waitForCharts(page, deadline, budgetMs);
    // Let the last drawn charts paint (animations, fonts) before the picture; never past the budget.
    await page.waitForLoadState('networkidle', { timeout: Math.max(1, Math.min(3000, deadline - Date.now())) }).catch(() => undefined);
    const png = await page.screenshot({ fullPage: true, timeout: 30_000 });
    return { charts, png };
  } finally {
    await context.close().catch(() => undefined);
  }
}

/** Superset's login page, as its form posts it: username, password and the page's CSRF token. */
async function signIn(page: Page, base: URL, who: DashboardPage): Promise<void> {
  const login = new URL('login/', base);
  await reach(page, login, 'the login page');
  const csrf = await page.locator('input[name="csrf_token"]').first().inputValue({ timeout: 10_000 }).catch(() => '');
  const res = await page.request.post(login.href, {
    form: { username: who.username, password: who.password, ...(csrf ? { csrf_token: csrf } : {}) },
    maxRedirects: 0,
    failOnStatusCode: false,
  });
  const to = res.headers()['location'];
  if (res.status() >= 500) throw new BrowserUnavailableError(`Superset's login page at ${login.href} answered ${res.status()} to the sign-in`);
  if (res.status() !== 302 || !to || new URL(to, login).pathname.startsWith(login.pathname))
    throw new BrowserUnavailableError(`Superset's login page at ${login.href} did not accept the environment's credentials (answered ${res.status()})`);
}

async function reach(page: Page, url: URL, what: string): Promise<void> {
  let status: number | undefined;
  try {
    status = (await page.goto(url.href, { waitUntil: 'domcontentloaded' }))?.status();
  } catch (err) {
    throw new BrowserUnavailableError(`Superset's frontend at ${url.origin} could not be reached (${what}): ${(err as Error).message.split('\n')[0]}`);
  }
  if (status !== undefined && status >= 400) throw new BrowserUnavailableError(`Superset's frontend answered ${status} for ${what} (${url.pathname})`);
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
  return charts.map((c) => (c.state === 'loading' ? { ...clean(c), message: `still loading after ${Math.round(budgetMs / 1000)} s` } : clean(c)));
}

function clean(c: RenderedChart): RenderedChart {
  return { id: c.id, name: c.name, state: c.state, ...(c.message ? { message: c.message.slice(0, 1000) } : {}) };
}
