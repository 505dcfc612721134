// Why the fake: (part) incidental: no Superset answer is asserted; the fake is only a registered environment.
// The web console in a real browser (Debian's Chromium through playwright-core) against the real
// API, a real worker and real Superset a → b: sign in, add an environment, dashboards with
// thumbnails, dry run then migrate with the diff shown, live logs to the end.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, onTestFailed } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles, supersets } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';
import { createSqliteDatabase } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, superset, type SourceFixture } from '../dashboard-migration/support.ts';
import { gitea, OtherClone, renameDashboard, setIdentity } from '../git/support.ts';
import { distinctColours, launchBrowser, openPage, screenshot, signIn } from './browser.ts';

let h: Harness;
let browser: Browser;
let page: Page;
let errors: string[];
let fake: FakeSuperset;
const P = `w${Date.now().toString(36)}`;
const real = supersets() !== null;
/** UI waits: a shared 2-core machine can be slow to render. */
const WAIT = { timeout: 15_000 };

let llm: FakeLlm;

beforeAll(async () => {
  llm = await startFakeLlm({ apiKey: 'sk-console-test', slowMs: 500 });
  [h, fake, browser] = await Promise.all([
    createHarness({ worker: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-console-test', LLM_MODEL: 'console-model' } }),
    startFakeSuperset({ thumbnails: true }),
    launchBrowser(),
  ]);
  ({ page, errors } = await openPage(browser, h.baseUrl));
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await fake?.close();
  await llm?.close();
  await h?.close();
});

describe('serving', () => {
  it('answers the app at / and at any app URL, while unknown /api paths stay problem bodies', async () => {
    const root = await fetch(`${h.baseUrl}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toContain('text/html');
    expect(root.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await root.text()).toContain('<div id="root">');
    const deep = await fetch(`${h.baseUrl}/tasks/some-task`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    const api = await fetch(`${h.baseUrl}/api/nothing-here`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toContain('application/problem+json');
    expect((await fetch(`${h.baseUrl}/assets/missing-chunk.js`)).status).toBe(404);
    const escape = await fetch(`${h.baseUrl}/..%2f..%2fpackage.json`);
    expect(escape.status).toBe(404);
    expect(await escape.text()).not.toContain('"dependencies"');
    expect((await fetch(`${h.baseUrl}/`, { method: 'POST' })).status).toBe(404);
    expect(await (await fetch(`${h.baseUrl}/environments`)).text()).toContain('<meta name="switchyard-oidc" content="off">');
  });
});

describe('journeys', () => {
  beforeEach(() =>
    onTestFailed(
      async ({ task }) =>
        void (await page.screenshot({ path: `/tmp/web-failed-${task.name.slice(0, 20).replace(/\W/g, '_')}.png` }).catch(() => undefined)),
    ),
  );
  it('signs in with a password; a wrong one is said so', async () => {
    await page.goto('/');
    await page.getByLabel(/^Username/).fill(ADMIN.username);
    await page.getByLabel(/^Password/).fill('wrong-password');
    // keyboard only: type, Tab to the password, Enter submits
    await page.getByLabel(/^Password/).fill('');
    await page.getByLabel(/^Username/).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.type('wrong-password');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').count(), WAIT).toBeGreaterThan(0);
    await signIn(page, ADMIN.username, ADMIN.password);
    await expect.poll(() => page.getByRole('heading', { name: 'Overview' }).count(), WAIT).toBe(1);
    await screenshot(page, 'overview');
  });

  it('adds an environment and tests its connection', async () => {
    await page.getByRole('link', { name: 'Environments' }).click();
    await page.getByRole('button', { name: 'Add' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Name/).fill(`${P}-fake`);
    await dialog.getByLabel(/^Superset URL/).fill(fake.baseUrl);
    await dialog.getByLabel(/^Username/).fill(fake.username);
    await dialog.getByLabel(/^Password/).fill(fake.password);
    await expect.poll(() => dialog.getByText('The password is write-only').count(), WAIT).toBe(1);
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = page.getByRole('row').filter({ hasText: `${P}-fake` });
    await row.waitFor();
    const listed = await h.request('GET', '/api/environments', { token: h.adminToken });
    expect(listed.body.items.map((e: any) => e.name)).toContain(`${P}-fake`);
    await row.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => page.getByTestId('env-test-result').textContent(), { timeout: 20_000 }).toMatch(/^OK/);
    await screenshot(page, 'environments');
  });

  it('lists dashboards with thumbnails: an image when ready, a placeholder with retry while Superset renders it', async () => {
    for (let i = 0; i < 30; i++) fake.addDashboard({ title: `${P} board ${String(i).padStart(2, '0')}`, slug: `${P}-${i}` });
    fake.dashboards.forEach((d, i) => (d.thumbnail = i % 3 === 0 ? 'pending' : 'ready'));
    const env = (await h.request('GET', '/api/environments', { token: h.adminToken })).body.items.find(
      (e: any) => e.name === `${P}-fake`,
    ).id;
    await page.goto(`/dashboards?env=${env}`);
    await expect.poll(() => page.getByTestId('dashboard-card').count(), { timeout: 20_000 }).toBe(24);
    // thumbnails are fetched as cards scroll into view
    for (const card of await page.getByTestId('dashboard-card').all()) await card.scrollIntoViewIfNeeded();
    await expect.poll(() => page.getByTestId('thumbnail').count(), { timeout: 20_000 }).toBe(16);
    expect(await page.getByTestId('thumbnail-placeholder').count()).toBe(8);
    await expect.poll(() => page.getByText('Thumbnail being rendered').count(), WAIT).toBe(8);
    expect(await page.getByText('Showing everything').count()).toBe(1);
    // the next page
    await page.getByRole('button', { name: '2', exact: true }).click();
    await expect.poll(() => page.getByTestId('dashboard-card').count(), WAIT).toBe(6);
    expect(page.url()).toContain('page=2');
    await screenshot(page, 'dashboards');
    // a rendered thumbnail appears on retry
    fake.dashboards.forEach((d) => (d.thumbnail = 'ready'));
    await page.getByRole('button', { name: 'Retry' }).first().click();
    await expect.poll(() => page.getByTestId('thumbnail').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(5);
    // 3,000 more: a deep page comes as quickly, only its 24 cards are rendered
    for (let i = 0; i < 3000; i++) fake.addDashboard({ title: `${P} many ${String(i).padStart(4, '0')}`, slug: `${P}-many-${i}` });
    const mark = fake.mark();
    await page.goto(`/dashboards?env=${env}&page=100`);
    await expect.poll(() => page.getByText(/^3030 dashboards$/).count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => page.getByTestId('dashboard-card').count(), WAIT).toBe(24);
    // As quick as page 1 because it costs what page 1 costs: Superset is asked for that one page of
    // 24 (no walk through the 99 before it), counted rather than timed, so a busy machine cannot fail it.
    const lists = fake.requests.slice(mark).filter((r) => r.path === '/api/v1/dashboard/');
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.map((r) => ({ page: (r.q as { page?: number }).page, page_size: (r.q as { page_size?: number }).page_size }))).toEqual(
      lists.map(() => ({ page: 99, page_size: 24 })),
    );
    await page.getByLabel('Search').fill('many 0042');
    await expect.poll(() => page.getByTestId('dashboard-card').count(), WAIT).toBe(1);
    expect(await page.getByTestId('dashboard-card').textContent()).toContain(`${P} many 0042`);
  });

  describe.runIf(real)('with real Superset a → b', () => {
    let src: SourceFixture;
    let envA: string;
    let envB: string;
    beforeAll(async () => {
      const [a, b] = await Promise.all([client('a'), client('b')]);
      const dir = path.join(inject('runDir'), P);
      src = await buildSource(a, P, dir, { dashboards: 1 });
      envA = await registerEnvironment(h, 'a', `${P}-a`);
      envB = await registerEnvironment(h, 'b', `${P}-b`);
      const targetDb = await createSqliteDatabase(b, {
        name: `${P}_warehouse`,
        path: path.join(dir, `${P}-b.db`),
        tables: prefixedTables(P),
      });
      const r = await h.request('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
        token: h.adminToken,
        json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
      });
      expect(r.status, r.text).toBe(200);
      expect(superset('a').version).toBe('6.1.0');
    }, 180_000);

    it('dry-runs a migration and shows the per-object diff, then migrates and follows the live logs to the end', async () => {
      const d = src.dashboards[0];
      await page.goto(`/migrate?source=${envA}&target=${envB}`);
      // the picker searches Superset a (shared by every test file, so it holds many dashboards)
      await page.getByRole('combobox', { name: 'Dashboards' }).fill(d.title);
      await page.getByRole('option', { name: d.title }).click();
      // A multi-select keeps its list open for the next pick (over the Next button): close it as a person would.
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('listbox').count(), { timeout: 5_000 }).toBe(0);
      await page.getByRole('button', { name: 'Next' }).click();
      await expect
        .poll(() => page.getByRole('table', { name: 'Database mappings' }).textContent(), { timeout: 20_000 })
        .toContain(`${P}_warehouse`);
      await page.getByRole('button', { name: 'Dry run' }).click();
      await expect.poll(() => page.getByTestId('object-diff').count(), { timeout: 90_000 }).toBe(1);
      const actions = await page.getByTestId('object-action').allTextContents();
      // a new dashboard with its two charts and dataset; the mapped database is reused
      expect(actions.filter((a) => a === 'create').length).toBeGreaterThanOrEqual(4);
      expect(actions).toContain('reuse');
      expect(await page.getByTestId('object-diff').textContent()).toContain(d.title);
      await screenshot(page, 'migrate-dry-run');
      await page.getByRole('button', { name: 'Migrate', exact: true }).click();
      await page.getByRole('link', { name: 'Live logs' }).click();
      await expect.poll(() => page.getByTestId('log-state').textContent(), { timeout: 120_000 }).toBe('ended');
      await expect.poll(() => page.getByTestId('task-status').textContent(), { timeout: 10_000 }).toBe('SUCCEEDED');
      const logs = await page.getByTestId('live-logs').textContent();
      expect(logs).toMatch(/completed|succeeded/i);
      // the task page reads its items from the items endpoint (a lone dashboard is open from the start)
      await expect.poll(() => page.getByTestId('object-action').allTextContents(), { timeout: 10_000 }).toContain('create');
      await screenshot(page, 'task-live-logs');
      const tasks = await h.request('GET', '/api/tasks?task_type=migration', { token: h.adminToken });
      expect(tasks.body.items.map((t: any) => t.status).sort()).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    }, 240_000);

    it('asks the (fake) LLM for descriptions and accepts them beside the current values, one edited', async () => {
      await page.goto(`/datasets?env=${envA}&dataset=${src.sales.id}`);
      await page.getByRole('button', { name: 'Suggestions' }).click();
      await expect.poll(() => page.getByTestId('generate-status').textContent(), { timeout: 90_000 }).toBe('SUCCEEDED');
      await expect.poll(() => page.getByTestId('suggestion').count(), WAIT).toBeGreaterThan(1);
      const total = await page.getByTestId('suggestion').count();
      const first = page.getByTestId('suggestion').first();
      await first.getByRole('textbox').fill('Edited by a person in the console');
      await first.getByRole('button', { name: 'Accept' }).click();
      await expect.poll(() => page.getByTestId('suggestion-status').count(), WAIT).toBe(1);
      await page.getByRole('button', { name: /^Accept \(/ }).click();
      await expect.poll(() => page.getByTestId('suggestion-status').allTextContents(), WAIT).toEqual(Array(total).fill('accepted'));
      await screenshot(page, 'dataset-suggestions');
      const r = await h.request('GET', `/api/datasets/${src.sales.id}/suggestions?env_id=${envA}&page_size=100&status=all`, {
        token: h.adminToken,
      });
      expect(r.body.items.map((s: any) => s.accepted_value)).toContain('Edited by a person in the console');
      const changes = await h.request('GET', `/api/datasets/${src.sales.id}/changes?env_id=${envA}`, { token: h.adminToken });
      expect(changes.body.items.filter((c: any) => c.source === 'suggestions' && c.status === 'applied')).toHaveLength(2);
      expect(llm.requests.length).toBeGreaterThan(0);
    }, 180_000);

    it('the assistant, asked in Russian, shows a confirmation card; confirming starts the migration', async () => {
      const d = src.dashboards[0];
      await page.goto('/tasks');
      await page.getByText('RU', { exact: true }).click();
      await page.getByRole('button', { name: 'Ассистент' }).click();
      const drawer = page.getByRole('dialog');
      await drawer.getByRole('textbox', { name: 'Ассистент' }).fill(`Перенеси дашборд «${d.title}» из ${P}-a в ${P}-b`);
      await drawer.getByRole('button', { name: 'Отправить' }).click();
      const card = drawer.getByTestId('confirmation-card');
      await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain(`#${d.id} «${d.title}»`);
      expect(await card.textContent()).toContain(`из ${P}-a в ${P}-b`);
      await screenshot(page, 'assistant-confirmation');
      await card.getByRole('button', { name: 'Подтвердить' }).click();
      await expect.poll(() => card.textContent(), WAIT).toMatch(/✓ migration-/);
      const taskId = /✓ (migration-[\w-]+)/.exec((await card.textContent()) ?? '')![1];
      expect((await h.waitForTask(taskId, undefined, 120_000)).status).toBe('SUCCEEDED');
      await page.keyboard.press('Escape');
      await page.getByText('EN', { exact: true }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Tasks' }).count(), WAIT).toBe(1);
    }, 240_000);

    it('a second release manager approves a checked release candidate; its author is not offered the button', async () => {
      const V2 = '/api/v2/clean-release';
      const author = await createUserWithRoles(h, `${P}-rm1`, ['ReleaseManager']);
      await createUserWithRoles(h, `${P}-rm2`, ['ReleaseManager']);
      const as =
        (token: string) =>
        (m: string, p: string, o: Record<string, unknown> = {}) =>
          h.request(m, p, { ...o, token });
      const bk = await as(h.adminToken)('POST', '/api/dashboards/backup', {
        json: { env_id: envA, dashboard_ids: [src.dashboards[0].id] },
      });
      const backupId = (await h.waitForTask(bk.body.task_id, undefined, 120_000)).result.items[0].backup_id;
      const hosts = [new URL(superset('a').baseUrl).hostname];
      expect((await as(h.adminToken)('PUT', `${V2}/registry`, { json: { hosts } })).status).toBe(200);
      const c = await as(author.token)('POST', `${V2}/candidates`, {
        json: { name: `${P} release`, target_env_id: envB, sources: [{ kind: 'backup', backup_id: backupId }] },
      });
      expect(c.status, c.text).toBe(201);
      const id = c.body.id;
      expect((await as(author.token)('POST', `${V2}/candidates/${id}/artifacts`, { json: {} })).status).toBe(200);
      expect((await as(author.token)('POST', `${V2}/candidates/${id}/manifest`)).status).toBe(201);
      const prep = await as(author.token)('POST', `${V2}/candidates/${id}/prepare`);
      expect(prep.body.status, prep.text).toBe('prepared');
      const check = await as(author.token)('POST', `${V2}/candidates/${id}/checks`);
      expect((await h.waitForTask(check.body.task_id, undefined, 120_000)).status).toBe('SUCCEEDED');

      // The author sees the candidate checked, and no Approve button.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(page, `${P}-rm1`, `${P}-rm1-password-123`);
      await page.goto(`/releases/${id}`);
      await expect.poll(() => page.getByTestId('candidate-state').textContent(), WAIT).toBe('checked');
      // The hint renders with the candidate's decisions, which may land after its state: waited for, not read once.
      await expect.poll(() => page.getByText('another person approves it').count(), WAIT).toBe(1);
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Sign out' }).click();
      // The second release manager approves it.
      await signIn(page, `${P}-rm2`, `${P}-rm2-password-123`);
      await page.goto(`/releases/${id}`);
      await page.getByLabel('comment').fill('ship it');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => page.getByTestId('candidate-state').textContent(), WAIT).toBe('approved');
      await expect.poll(() => page.getByRole('button', { name: 'Publish' }).count(), WAIT).toBe(1);
      await screenshot(page, 'release-approved');
      const after = await as(h.adminToken)('GET', `${V2}/candidates/${id}`);
      expect(after.body.state).toBe('approved');
      expect(after.body.decisions).toContainEqual(expect.objectContaining({ action: 'approve', comment: 'ship it' }));
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(page, ADMIN.username, ADMIN.password);
    }, 300_000);

    it.runIf(inject('gitea') !== null)(
      'resolves a real git conflict in the three-way merge view (theirs), then continues the merge',
      async () => {
        const g = gitea()!;
        const a = await client('a');
        const dash = src.dashboards[0].id;
        const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
        const G = (op: string) => `/api/git/dashboards/${dash}/${op}`;
        const cfg = await admin('POST', '/api/git/configs', {
          json: { name: `${P}-gitea`, provider: 'gitea', base_url: g.baseUrl, owner: g.username, pat: g.token },
        });
        expect(cfg.status, cfg.text).toBe(201);
        await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
        const init = await admin('POST', G('init'), { json: { env_id: envA, config_id: cfg.body.id, create_remote: true } });
        expect(init.status, init.text).toBe(200);
        const uuid = init.body.dashboard_uuid;
        expect((await admin('POST', G('sync'), { json: { env_id: envA } })).status).toBe(200);
        expect((await admin('POST', G('commit'), { json: { env_id: envA, message: 'first export' } })).status).toBe(200);
        expect((await admin('POST', G('push'), { json: { env_id: envA } })).status).toBe(200);
        // The remote and the local side rename the dashboard differently: pulling conflicts.
        const other = new OtherClone(path.join(inject('runDir'), `${P}-other`), g);
        await other.clone(init.body.remote_url);
        const file = `dashboards/${uuid}.yaml`;
        await other.commitAndPush(
          file,
          other.read(file).replace(/^dashboard_title: .*$/m, 'dashboard_title: remote title'),
          'Remote rename',
        );
        await renameDashboard(a, dash, 'local title');
        await admin('POST', G('sync'), { json: { env_id: envA } });
        await admin('POST', G('commit'), { json: { env_id: envA, message: 'Local rename' } });

        await page.goto(`/git?env=${envA}&dashboard=${dash}`);
        await page.getByRole('button', { name: 'Pull' }).click();
        await expect.poll(() => page.getByTestId('pull-result').textContent(), WAIT).toBe('pull: conflict');
        await expect.poll(() => page.getByTestId('repo-status').textContent(), WAIT).toBe('MERGING');
        const conflict = page.getByTestId('conflict');
        await expect.poll(() => conflict.textContent(), WAIT).toContain('dashboard_title: remote title');
        expect(await conflict.textContent()).toContain('dashboard_title: local title');
        expect(await page.getByRole('button', { name: 'Continue' }).isDisabled()).toBe(true);
        await screenshot(page, 'git-merge');
        await conflict.getByRole('button', { name: 'Theirs' }).click();
        await expect.poll(() => conflict.textContent(), WAIT).toContain('resolved');
        await page.getByRole('button', { name: 'Continue' }).click();
        await expect.poll(() => page.getByTestId('repo-status').textContent(), WAIT).toBe('AHEAD');
        expect(await page.getByTestId('merge-view').count()).toBe(0);
        const status = await admin('GET', `${G('status')}?env_id=${envA}`);
        expect(status.body).toMatchObject({ status: 'AHEAD', has_unfinished_merge: false });
        const work = await admin('GET', `${G('merge/status')}?env_id=${envA}`);
        expect(work.body.has_unfinished_merge).toBe(false);
        const hist = await admin('GET', `${G('history')}?env_id=${envA}&limit=1`);
        expect(hist.body.items[0].files).toContain(file);
      },
      240_000,
    );
  });

  it('works on a narrow screen and in Russian, and said nothing in the console', async () => {
    const narrow = await openPage(browser, h.baseUrl, { width: 390, height: 844 });
    await signIn(narrow.page, ADMIN.username, ADMIN.password);
    await narrow.page.getByText('RU', { exact: true }).click();
    await narrow.page.getByRole('button', { name: 'menu' }).click();
    await expect.poll(() => narrow.page.getByRole('link', { name: 'Окружения' }).isVisible(), WAIT).toBe(true);
    await narrow.page.getByRole('link', { name: 'Задачи' }).click();
    await expect.poll(() => narrow.page.getByRole('heading', { name: 'Задачи' }).count(), WAIT).toBe(1);
    expect(distinctColours(await narrow.page.screenshot())).toBeGreaterThan(16);
    await screenshot(narrow.page, 'tasks-narrow-ru');
    // The session is revoked elsewhere: the next request's 401 brings the sign-in page, which says why.
    const token = await narrow.page.evaluate(() => sessionStorage.getItem('switchyard.token'));
    expect((await h.request('POST', '/api/auth/logout', { token: token! })).status).toBeLessThan(300);
    await narrow.page.getByRole('button', { name: 'menu' }).click();
    await narrow.page.getByRole('link', { name: 'Окружения' }).click();
    await expect.poll(() => narrow.page.getByText('Сессия завершилась. Войдите снова.').count(), WAIT).toBe(1);
    expect(await narrow.page.evaluate(() => sessionStorage.getItem('switchyard.token'))).toBeNull();
    await narrow.page.context().close();
    // The wrong password's 401 is the one expected resource error.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    expect(narrow.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});
