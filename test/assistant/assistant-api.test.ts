// The assistant over HTTP against the real Superset 6.1.0 a (dev) and b (prod), a real worker,
// PostgreSQL and Temporal: every answer state, confirmations (owner, another user, twice, cancel,
// expiry), denied per role, audit and conversations. The instances are shared with other test
// files, so everything the commands name is created here under this file's prefix and named with
// it; a list without a name (a page of whatever the instance holds) is checked for what a shared
// instance can promise: the environment it read and a whole first page of that instance's count.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, registerEnvironment } from '../dashboard-migration/support.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';
import { createDashboard, createDataset, createSqliteDatabase, defaultTables, type SupersetClient } from '../support/superset/fixtures.ts';

const enabled = inject('supersets') !== null;
const P = uniquePrefix('aapi');
const SALES = `${P} Sales Overview`;
const OPS = `${P} Ops board`;
const ORDERS = `${P}_orders`;
const CUSTOMERS = `${P}_customers`;
/** The assistant's page of a list without a name (api/assistant/operations/lists.ts). */
const LIST_SIZE = 25;

let h: Harness;
let llm: FakeLlm;
let dev: string;
let prod: string;
let ops: number;
let sales: number;
/** This file's SQLite databases in a and b, for a migration naming its database mapping. */
let devDb: number;
let prodDb: number;
let operator: { id: string; token: string };
let operator2: { id: string; token: string };
let viewer: { id: string; token: string };
let releaser: { id: string; token: string };
let talker: { id: string; token: string };

/** The file's orders and customers tables, under its prefix (a shared Superset refuses a second dataset on a same-named table). */
const tables = () => defaultTables().map((t) => ({ ...t, name: t.name === 'sales' ? ORDERS : CUSTOMERS }));

/**
 * In a: four dashboards (three whose titles share "Sales", so a name can match several) and the
 * orders dataset; in b: orders and customers, so a dataset list tells prod from dev. A database in
 * each, one after the other on an instance (its SQLite metadata takes one writer at a time).
 */
async function seed(a: SupersetClient, b: SupersetClient) {
  const dir = path.join(inject('runDir'), P);
  const inA = async () => {
    const db = await createSqliteDatabase(a, { name: `${P} analytics`, path: path.join(dir, 'dev.db'), tables: tables() });
    await createDataset(a, { database: db.id, tableName: ORDERS });
    const s = await createDashboard(a, { title: SALES, slug: `${P}-sales-overview` });
    const o = await createDashboard(a, { title: OPS, slug: `${P}-ops-board` });
    await createDashboard(a, { title: `${P} Sales by region`, slug: `${P}-sales-region` });
    await createDashboard(a, { title: `${P} Sales by month`, slug: `${P}-sales-month` });
    return { db: db.id, sales: s.id, ops: o.id };
  };
  const inB = async () => {
    const db = await createSqliteDatabase(b, { name: `${P} warehouse`, path: path.join(dir, 'prod.db'), tables: tables() });
    await createDataset(b, { database: db.id, tableName: ORDERS });
    await createDataset(b, { database: db.id, tableName: CUSTOMERS });
    return db.id;
  };
  const [inDev, inProd] = await Promise.all([inA(), inB()]);
  ({ sales, ops, db: devDb } = inDev);
  prodDb = inProd;
}

beforeAll(async () => {
  if (!enabled) return;
  llm = await startFakeLlm();
  const [harness, a, b] = await Promise.all([
    createHarness({ worker: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-assistant-test-key', LLM_MODEL: 'default-model' } }),
    client('a'),
    client('b'),
  ]);
  h = harness;
  await seed(a, b);
  dev = await registerEnvironment(h, 'a', 'dev');
  prod = await registerEnvironment(h, 'b', 'prod');
  operator = await createUserWithRoles(h, 'asst-operator', ['Operator']);
  operator2 = await createUserWithRoles(h, 'asst-operator2', ['Operator']);
  viewer = await createUserWithRoles(h, 'asst-viewer', ['Viewer']);
  releaser = await createUserWithRoles(h, 'asst-releaser', ['ReleaseManager']);
  const role = await h.request('POST', '/api/admin/roles', {
    token: h.adminToken,
    json: { name: 'TalkOnly', permissions: ['assistant:USE'] },
  });
  expect(role.status, role.text).toBe(201);
  talker = await createUserWithRoles(h, 'asst-talker', ['TalkOnly']);
}, 180_000);
afterAll(async () => {
  await h?.close();
  await llm?.close();
});

const say = (token: string, text: string, extra: Record<string, unknown> = {}) =>
  h.request('POST', '/api/assistant/messages', { token, json: { text, ...extra } });
const confirm = (token: string, id: string) => h.request('POST', `/api/assistant/confirmations/${id}/confirm`, { token });
const cancel = (token: string, id: string) => h.request('POST', `/api/assistant/confirmations/${id}/cancel`, { token });
const tasksOf = async (token: string) => (await h.request('GET', '/api/tasks?page_size=100', { token })).body.items as any[];
const auditOf = async (token: string, q = '') => (await h.request('GET', `/api/assistant/audit${q}`, { token })).body;

describe.runIf(enabled)('answers by state', () => {
  it('answers a capabilities question in the language it was asked', async () => {
    const ru = await say(operator.token, 'что ты умеешь?');
    expect(ru.status, ru.text).toBe(200);
    expect(ru.body).toMatchObject({
      state: 'answered',
      intent: { domain: 'help', operation: 'capabilities', requires_confirmation: false },
    });
    expect(ru.body.text).toMatch(/Я понимаю команды/);
    const en = await say(operator.token, 'what can you do?');
    expect(en.body.text).toMatch(/I understand commands/);
    expect((await say(operator.token, 'что ты умеешь?')).body.text).toBe(ru.body.text);
  });

  it('gives needs_clarification with intent unknown when nothing matches', async () => {
    const r = await say(operator.token, 'расскажи анекдот');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: 'needs_clarification', intent: { domain: 'unknown', operation: 'unknown', confidence: 0 } });
    expect(r.body.intent).toEqual(expect.objectContaining({ entities: {}, risk_level: 'safe', requires_confirmation: false }));
  });

  it('names a missing parameter in the language of the question, and a reply completes the command', async () => {
    const r = await say(operator.token, 'покажи дашборды');
    expect(r.body).toMatchObject({
      state: 'needs_clarification',
      intent: { domain: 'dashboards', operation: 'list' },
      data: { missing: ['environment'] },
    });
    expect(r.body.text).toMatch(/окружение/);
    const en = await say(operator.token, 'migrate dashboard 5');
    expect(en.body.text).toMatch(/source environment.*target environment/);
    const follow = await say(operator.token, 'в dev', { conversation_id: r.body.conversation_id });
    expect(follow.body).toMatchObject({ state: 'executed', intent: { operation: 'list', entities: { environment: 'dev' } } });
    // A shared a holds other files' dashboards too: the list read dev's, a whole first page of them.
    expect(follow.body.data).toMatchObject({ env_id: dev, total: expect.any(Number) });
    expect(follow.body.data.total).toBeGreaterThanOrEqual(4);
    expect(follow.body.data.items).toHaveLength(Math.min(LIST_SIZE, follow.body.data.total));
    // Named, the reply completes the search and its answer is exactly what a holds under the name.
    const named = await say(operator.token, `покажи дашборды «${P} Sales»`);
    expect(named.body).toMatchObject({ state: 'needs_clarification', data: { missing: ['environment'] } });
    const found = await say(operator.token, 'в dev', { conversation_id: named.body.conversation_id });
    expect(found.body).toMatchObject({ state: 'executed', intent: { operation: 'search', entities: { environment: 'dev' } } });
    expect(found.body.data.items.map((d: any) => d.title).sort()).toEqual([SALES, `${P} Sales by month`, `${P} Sales by region`]);
  });

  it('runs a read-only operation and answers with data', async () => {
    const r = await say(operator.token, `найди дашборд «${P} Ops» в dev`);
    expect(r.body).toMatchObject({
      state: 'executed',
      intent: { operation: 'search', entities: { query: `${P} Ops`, environment: 'dev' } },
    });
    expect(r.body.data.items).toEqual([expect.objectContaining({ id: ops, title: OPS })]);
    // prod is b, which holds customers besides orders; dev (a) holds orders alone.
    const ds = await say(operator.token, `list datasets ${P} in prod`);
    expect(ds.body.state, ds.text).toBe('executed');
    expect(ds.body.data.items.map((d: any) => d.table_name).sort()).toEqual([CUSTOMERS, ORDERS]);
    expect(ds.body.data.env_id).toBe(prod);
    const inDev = await say(operator.token, `найди датасеты ${P} в dev`);
    expect(inDev.body.data.items.map((d: any) => d.table_name)).toEqual([ORDERS]);
    expect(inDev.body.data.env_id).toBe(dev);
    const all = await say(operator.token, 'list datasets in prod');
    expect(all.body).toMatchObject({ state: 'executed', intent: { operation: 'list' }, data: { env_id: prod } });
    expect(all.body.data.total).toBeGreaterThanOrEqual(2);
    expect(all.body.data.items).toHaveLength(Math.min(LIST_SIZE, all.body.data.total));
  });

  it('asks which one when a name matches several dashboards, and names an unknown environment', async () => {
    const r = await say(operator.token, `сделай бэкап дашборда «${P} Sales» в dev`);
    expect(r.body.state, r.text).toBe('needs_clarification');
    expect(r.body.data.ambiguous).toBe('dashboard');
    expect(r.body.data.candidates.map((c: any) => c.title).sort()).toEqual([SALES, `${P} Sales by month`, `${P} Sales by region`]);
    expect(r.body.text).toMatch(/Какой вы имеете в виду/);
    const exact = await say(operator.token, `сделай бэкап дашборда «${SALES}» в dev`);
    expect(exact.body.state).toBe('awaiting_confirmation');
    const unknown = await say(operator.token, 'покажи дашборды в окружении staging');
    expect(unknown.body).toMatchObject({ state: 'needs_clarification', data: { not_found: 'environment' } });
    expect(unknown.body.text).toMatch(/dev, prod/);
  });

  it('refuses an unsupported operation with 400 and stores nothing', async () => {
    const before = (await h.request('GET', '/api/assistant/conversations', { token: operator.token })).body.total;
    const r = await say(operator.token, 'удали дашборд 5 в dev');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'unsupported_operation', intent: { operation: 'unsupported' } });
    expect((await h.request('GET', '/api/assistant/conversations', { token: operator.token })).body.total).toBe(before);
  });

  it('refuses bad input with problem bodies', async () => {
    expect((await h.request('POST', '/api/assistant/messages', { token: operator.token, json: {} })).status).toBe(400);
    expect((await h.request('POST', '/api/assistant/messages', { token: operator.token, json: { text: 'x', extra: 1 } })).status).toBe(400);
    expect((await say(operator.token, 'help', { conversation_id: 'nope' })).status).toBe(400);
    expect((await h.request('POST', '/api/assistant/messages', { json: { text: 'help' } })).status).toBe(401);
    expect((await confirm(operator.token, 'not-a-uuid')).status).toBe(400);
    expect((await confirm(operator.token, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('answers 404 for an unknown dataset review session', async () => {
    const r = await say(operator.token, 'help', { dataset_review_session_id: 'drs-1' });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });
});

describe.runIf(enabled)('denied per role', () => {
  // Denied before anything is looked up: the dashboard and dataset ids are never asked of Superset.
  it.each([
    ['Viewer', 'перенеси дашборд 1 из dev в prod', () => viewer, 'dashboards:MIGRATE'],
    ['Viewer', 'сделай бэкап дашборда 1 в dev', () => viewer, 'dashboards:BACKUP'],
    ['Viewer', 'закоммить дашборд 1 в dev «x»', () => viewer, 'git:WRITE'],
    ['Viewer', 'generate docs for dataset 1 in dev', () => viewer, 'datasets:WRITE'],
    ['ReleaseManager', 'сделай бэкап дашборда 1 в dev', () => releaser, 'dashboards:BACKUP'],
    ['ReleaseManager', 'migrate dashboard 1 from dev to prod', () => releaser, 'dashboards:MIGRATE'],
    ['a role with only assistant:USE', 'покажи дашборды в dev', () => talker, 'dashboards:READ'],
  ])('%s: "%s" is denied and nothing runs', async (_role, text, who, permission) => {
    const user = who();
    const tasksBefore = (await tasksOf(h.adminToken)).length;
    const r = await say(user.token, text);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ state: 'denied', data: { permission } });
    expect(r.body.confirmation).toBeUndefined();
    expect(r.body.task_id).toBeUndefined();
    expect((await tasksOf(h.adminToken)).length).toBe(tasksBefore);
    if (user !== talker) {
      const audit = await auditOf(user.token);
      expect(audit.items[0]).toMatchObject({ decision: 'denied', outcome: { permission } });
    }
  });

  it('is closed to a caller without assistant:USE, and the audit needs tasks:READ', async () => {
    const role = await h.request('POST', '/api/admin/roles', {
      token: h.adminToken,
      json: { name: 'ReadsTasks', permissions: ['tasks:READ'] },
    });
    expect(role.status).toBe(201);
    const reader = await createUserWithRoles(h, 'asst-reader', ['ReadsTasks']);
    expect((await say(reader.token, 'help')).status).toBe(403);
    expect((await h.request('GET', '/api/assistant/audit', { token: talker.token })).status).toBe(403);
    expect((await h.request('GET', '/api/assistant/audit', { token: reader.token })).status).toBe(200);
  });
});

describe.runIf(enabled)('confirmations', () => {
  it('a risky command waits for its owner; another user gets 403; confirming twice starts one task', async () => {
    const tasksBefore = (await tasksOf(h.adminToken)).length;
    const sent = Date.now();
    const r = await say(operator.token, `сделай бэкап дашборда «${OPS}» в dev`);
    const received = Date.now();
    expect(r.body).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { domain: 'dashboards', operation: 'backup', risk_level: 'medium', requires_confirmation: true },
    });
    const c = r.body.confirmation;
    expect(c.summary).toMatch(new RegExp(`резервную копию 1 дашборда.*${OPS}.*dev`));
    // The TTL counted from when the server wrote it, somewhere between sending and receiving: exact
    // however long the request took (measuring from after it assumed a reply within a minute).
    const ttlMs = h.config.ASSISTANT_CONFIRMATION_TTL_SECONDS * 1000;
    expect(Date.parse(c.expires_at)).toBeGreaterThanOrEqual(sent + ttlMs);
    expect(Date.parse(c.expires_at)).toBeLessThanOrEqual(received + ttlMs);
    expect((await tasksOf(h.adminToken)).length).toBe(tasksBefore);
    // The confirmation is a workflow waiting for its decision.
    const wf = await h.boot.context.temporal.workflow.getHandle(`assistant-confirmation-${c.id}`).describe();
    expect(wf.status.name).toBe('RUNNING');

    const other = await confirm(operator2.token, c.id);
    expect(other.status).toBe(403);
    expect((await auditOf(operator2.token)).items[0]).toMatchObject({
      decision: 'denied',
      confirmation_id: c.id,
      outcome: { reason: 'not_owner' },
    });

    const [first, second] = await Promise.all([confirm(operator.token, c.id), confirm(operator.token, c.id)]);
    expect(first.status, first.text).toBe(200);
    expect(second.status, second.text).toBe(200);
    expect(first.body.task_id).toMatch(/^backup-/);
    expect(second.body.task_id).toBe(first.body.task_id);
    const third = await confirm(operator.token, c.id);
    expect(third.body.task_id).toBe(first.body.task_id);
    const late = await cancel(operator.token, c.id);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('confirmation_decided');
    const created = (await tasksOf(h.adminToken)).filter((t) => t.type === 'backup');
    expect(created.map((t) => t.id)).toEqual([first.body.task_id]);
    expect(created[0]).toMatchObject({ owner_username: 'asst-operator', params: { env_id: dev, dashboard_ids: [ops] } });
    await h.waitForTask(first.body.task_id);
    await waitFor(
      async () =>
        (await h.boot.context.temporal.workflow.getHandle(`assistant-confirmation-${c.id}`).describe()).status.name === 'COMPLETED',
    );

    const audit = await auditOf(operator.token, '?decision=confirmed');
    expect(audit.items.filter((a: any) => a.confirmation_id === c.id)).toEqual([
      expect.objectContaining({ decision: 'confirmed', task_id: first.body.task_id, operation: 'backup' }),
    ]);
    // The conversation shows the command, the question and the started task.
    const history = await h.request('GET', `/api/assistant/conversations/${r.body.conversation_id}/messages`, { token: operator.token });
    expect(history.body.items.map((m: any) => [m.role, m.state])).toEqual([
      ['user', null],
      ['assistant', 'awaiting_confirmation'],
      ['assistant', 'executed'],
    ]);
    expect(history.body.items[2].task_id).toBe(first.body.task_id);
  });

  it('cancel ends a confirmation: nothing starts and confirming it is refused', async () => {
    const r = await say(operator.token, `migrate dashboard "${OPS}" from dev to prod`);
    expect(r.body.state, r.text).toBe('awaiting_confirmation');
    expect(r.body.confirmation.summary).toContain(`Migrate 1 dashboard (#${ops} "${OPS}") from dev to prod`);
    // The card says what travels besides the bundle: the API's companion defaults, read for a person.
    expect(r.body.confirmation.summary).toMatch(/alerts and reports \(paused\).*roles differ in the target stops/);
    const id = r.body.confirmation.id;
    expect((await cancel(operator2.token, id)).status).toBe(403);
    const c = await cancel(operator.token, id);
    expect(c.status, c.text).toBe(200);
    expect(c.body).toMatchObject({ status: 'cancelled', task_id: null });
    expect((await cancel(operator.token, id)).status).toBe(200);
    const after = await confirm(operator.token, id);
    expect(after.status).toBe(400);
    expect(after.body.code).toBe('confirmation_cancelled');
    expect(
      (await tasksOf(h.adminToken)).some((t) => t.type === 'migration' && t.params.dashboard_ids?.includes(ops) && !t.params.dry_run),
    ).toBe(false);
    expect((await auditOf(operator.token, '?decision=cancelled')).items[0]).toMatchObject({ confirmation_id: id });
    await waitFor(
      async () => (await h.boot.context.temporal.workflow.getHandle(`assistant-confirmation-${id}`).result()).state === 'cancelled',
    );
  });

  it('re-checks permissions at confirm time', async () => {
    const role = await h.request('POST', '/api/admin/roles', {
      token: h.adminToken,
      json: { name: 'Backuper', permissions: ['assistant:USE', 'dashboards:BACKUP', 'tasks:READ'] },
    });
    const user = await createUserWithRoles(h, 'asst-backuper', ['Backuper']);
    const r = await say(user.token, `back up dashboard ${sales} in dev`);
    expect(r.body.state, r.text).toBe('awaiting_confirmation');
    const put = await h.request('PUT', `/api/admin/users/${user.id}`, { token: h.adminToken, json: { roles: ['TalkOnly'] } });
    expect(put.status, put.text).toBe(200);
    const c = await confirm(user.token, r.body.confirmation.id);
    expect(c.status).toBe(403);
    expect(role.status).toBe(201);
  });

  it('a dry run changes nothing, so it runs at once', async () => {
    const r = await say(operator.token, `пробный перенос дашборда ${sales} из dev в prod`);
    expect(r.body).toMatchObject({ state: 'executed', intent: { risk_level: 'low', requires_confirmation: false } });
    expect(r.body.task_id).toMatch(/^migration-/);
    const task = await h.waitForTask(r.body.task_id);
    expect(task.params).toMatchObject({ dry_run: true, source_env_id: dev, target_env_id: prod });
    const status = await say(operator.token, `статус задачи ${r.body.task_id}`);
    expect(status.body).toMatchObject({
      state: 'executed',
      intent: { domain: 'tasks', operation: 'status' },
      data: { task: { id: r.body.task_id } },
    });
    const logs = await say(operator.token, `logs of task ${r.body.task_id}`);
    expect(logs.body.state).toBe('executed');
    expect(logs.body.data.items.length).toBeGreaterThan(0);
    const hidden = await say(viewer.token, `статус задачи ${r.body.task_id}`);
    expect(hidden.body.state).toBe('executed'); // a Viewer holds tasks:READ
    const audit = await auditOf(operator.token, '?decision=executed');
    expect(audit.items.some((a: any) => a.task_id === r.body.task_id)).toBe(true);
  });

  it('takes database mappings named in the text, as the route takes db_mappings', async () => {
    // The file's own databases in a and b, by their ids.
    const mapping = [{ source_database_id: devDb, target_database_id: prodDb }];
    const r = await say(operator.token, `пробный перенос дашборда «${SALES}» из dev в prod, база ${devDb} → ${prodDb}`);
    expect(r.body, r.text).toMatchObject({ state: 'executed', intent: { entities: { db_mappings: mapping } } });
    expect(r.body.text).toContain(`#${devDb} → #${prodDb}`);
    const task = await h.waitForTask(r.body.task_id);
    expect(task.params).toMatchObject({ db_mappings: mapping, overwrite: true, dry_run: true });
    const planned = await say(operator.token, `migrate dashboard "${SALES}" from dev to prod with database ${devDb} to ${prodDb}`);
    expect(planned.body.confirmation.summary).toContain(`Databases: #${devDb} → #${prodDb}`);
    const c = await confirm(operator.token, planned.body.confirmation.id);
    expect(c.status, c.text).toBe(200);
    const started = (await h.request('GET', `/api/tasks/${c.body.task_id}`, { token: operator.token })).body;
    expect(started.params).toMatchObject({ db_mappings: mapping, dry_run: false });
    // The same database twice is what the route refuses too: a question, nothing planned.
    const twice = await say(
      operator.token,
      `migrate dashboard "${SALES}" from dev to prod, db ${devDb}:${prodDb} and db ${devDb}:${prodDb + 1}`,
    );
    expect(twice.body).toMatchObject({ state: 'needs_clarification', data: { invalid: 'request' } });
  });
});

describe.runIf(enabled)('datasets and git through the assistant', () => {
  it('generate docs asks first, then starts an llm_docs task in the language of the question', async () => {
    const r = await say(operator.token, `сгенерируй документацию для датасета ${ORDERS} в dev`);
    expect(r.body).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { domain: 'datasets', operation: 'generate_docs', entities: { language: 'ru' } },
    });
    expect(r.body.confirmation.summary).toMatch(new RegExp(`на русском.*1 датасета \\(#\\d+ ${ORDERS}\\).*dev`));
    const c = await confirm(operator.token, r.body.confirmation.id);
    expect(c.status, c.text).toBe(200);
    const task = (await tasksOf(h.adminToken)).find((t) => t.id === c.body.task_id);
    expect(task).toMatchObject({ type: 'llm_docs', params: { env_id: dev, llm_provider: 'default', language: 'ru' } });
  });

  it('git status runs at once; a commit waits for confirmation and answers its result', async () => {
    const pref = await h.request('PATCH', '/api/profile/preferences', {
      token: operator.token,
      json: { git_username: 'Op', git_email: 'op@example.com' },
    });
    expect(pref.status, pref.text).toBe(200);
    const none = await say(operator.token, `git статус дашборда "${OPS}" в dev`);
    expect(none.body).toMatchObject({ state: 'executed', intent: { domain: 'git', operation: 'status' } });
    expect(none.body.data.items[0]).toMatchObject({ dashboard_id: ops, status: 'NO_REPO' });
    const init = await h.request('POST', `/api/git/dashboards/${ops}/init`, { token: operator.token, json: { env_id: dev } });
    expect(init.status, init.text).toBe(200);
    const r = await say(operator.token, `закоммить дашборд ${ops} в dev с сообщением «assistant commit»`);
    expect(r.body).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { operation: 'commit', entities: { message: 'assistant commit' } },
    });
    expect(r.body.confirmation.summary).toMatch(new RegExp(`${OPS}.*assistant commit`));
    const c = await confirm(operator.token, r.body.confirmation.id);
    expect(c.status, c.text).toBe(200);
    expect(c.body.task_id).toBeNull();
    expect(c.body.data).toEqual(expect.objectContaining({ committed: expect.any(Boolean) }));
    const again = await confirm(operator.token, r.body.confirmation.id);
    expect(again.body.data).toEqual(c.body.data);
    expect(
      (await auditOf(operator.token, '?decision=confirmed')).items.filter((a: any) => a.confirmation_id === r.body.confirmation.id),
    ).toHaveLength(1);
  });

  it("a deploy of the repository's head into another environment waits for confirmation, then starts the git_deploy task the route would", async () => {
    const history = await h.request('GET', `/api/git/dashboards/${ops}/history?env_id=${dev}`, { token: operator.token });
    expect(history.status, history.text).toBe(200);
    const head = history.body.items?.[0]?.commit ?? history.body[0]?.commit;
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    const r = await say(operator.token, `задеплой дашборд ${ops} из dev в prod`);
    expect(r.body, JSON.stringify(r.body)).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { domain: 'git', operation: 'deploy', risk_level: expect.any(String), requires_confirmation: true },
    });
    expect(r.body.confirmation.summary).toMatch(/prod/);
    expect((await say(viewer.token, `задеплой дашборд ${ops} из dev в prod`)).body.state).toBe('denied');
    const c = await confirm(operator.token, r.body.confirmation.id);
    expect(c.status, c.text).toBe(200);
    const task = (await tasksOf(h.adminToken)).find((t) => t.id === c.body.task_id);
    expect(task).toMatchObject({ type: 'git_deploy', params: { env_id: dev, target_env_id: prod, commit: head } });
  });
});

describe.runIf(enabled)('expiry', () => {
  let short: Harness;
  beforeAll(async () => {
    short = await createHarness({ worker: true, env: { ASSISTANT_CONFIRMATION_TTL_SECONDS: '2' } });
    await registerEnvironment(short, 'a', 'dev');
  }, 60_000);
  afterAll(async () => short?.close());

  it('says the configured lifetime in its help', async () => {
    const ru = await short.request('POST', '/api/assistant/messages', { token: short.adminToken, json: { text: 'помощь' } });
    expect(ru.body.text).toMatch(/в течение 2 секунд\)/);
    const en = await short.request('POST', '/api/assistant/messages', { token: short.adminToken, json: { text: 'help' } });
    expect(en.body.text).toMatch(/within 2 seconds\)/);
    expect((await say(operator.token, 'help')).body.text).toMatch(/within 10 minutes\)/);
  });

  it('after its lifetime a confirmation answers 400 and starts no task; the timer records the expiry once', async () => {
    const r = await short.request('POST', '/api/assistant/messages', {
      token: short.adminToken,
      json: { text: `сделай бэкап дашборда ${sales} в dev` },
    });
    expect(r.body.state, r.text).toBe('awaiting_confirmation');
    const id = r.body.confirmation.id;
    const handle = short.boot.context.temporal.workflow.getHandle(`assistant-confirmation-${id}`);
    expect((await handle.result()).state).toBe('expired');
    const audit = await short.request('GET', '/api/assistant/audit?decision=expired', { token: short.adminToken });
    expect(audit.body.items).toEqual([expect.objectContaining({ confirmation_id: id, decision: 'expired' })]);
    const c = await short.request('POST', `/api/assistant/confirmations/${id}/confirm`, { token: short.adminToken });
    expect(c.status).toBe(400);
    expect(c.body.code).toBe('confirmation_expired');
    const k = await short.request('POST', `/api/assistant/confirmations/${id}/cancel`, { token: short.adminToken });
    expect(k.status).toBe(400);
    expect(k.body.code).toBe('confirmation_expired');
    expect((await short.request('GET', '/api/tasks', { token: short.adminToken })).body.total).toBe(0);
    expect((await short.request('GET', '/api/assistant/audit?decision=expired', { token: short.adminToken })).body.total).toBe(1);
  });
});

describe.runIf(enabled)('conversations', () => {
  it('lists my conversations, latest first, with preview and archived flag; history pages; delete archives or removes', async () => {
    const a = await say(viewer.token, 'покажи дашборды в dev');
    const b = await say(viewer.token, 'list datasets in dev');
    await say(viewer.token, 'покажи датасеты', { conversation_id: a.body.conversation_id });
    const list = await h.request('GET', '/api/assistant/conversations', { token: viewer.token });
    expect(list.status).toBe(200);
    const mine = list.body.items.filter((c: any) => [a.body.conversation_id, b.body.conversation_id].includes(c.conversation_id));
    expect(mine.map((c: any) => c.conversation_id)).toEqual([a.body.conversation_id, b.body.conversation_id]);
    expect(mine[0]).toMatchObject({ archived: false, message_count: 4, title: 'покажи дашборды в dev' });
    expect(mine[0].last_message_preview).toMatch(/окружение/);
    // Nobody else sees them.
    const theirs = await h.request('GET', '/api/assistant/conversations', { token: operator.token });
    expect(theirs.body.items.some((c: any) => c.conversation_id === a.body.conversation_id)).toBe(false);
    expect(
      (await h.request('GET', `/api/assistant/conversations/${a.body.conversation_id}/messages`, { token: operator.token })).status,
    ).toBe(404);
    expect((await say(operator.token, 'help', { conversation_id: a.body.conversation_id })).status).toBe(404);
    expect((await h.request('DELETE', `/api/assistant/conversations/${a.body.conversation_id}`, { token: operator.token })).status).toBe(
      404,
    );

    const page = await h.request('GET', `/api/assistant/conversations/${a.body.conversation_id}/messages?page=2&page_size=3`, {
      token: viewer.token,
    });
    expect(page.body).toMatchObject({ total: 4, page: 2, page_size: 3, has_next: false });
    expect(page.body.items.map((m: any) => m.role)).toEqual(['assistant']);

    // The pending question is forgotten with the conversation.
    const del = await h.request('DELETE', `/api/assistant/conversations/${a.body.conversation_id}`, { token: viewer.token });
    expect(del.body).toEqual({ conversation_id: a.body.conversation_id, deleted: 'archived' });
    const archived = await h.request('GET', '/api/assistant/conversations?archived=true', { token: viewer.token });
    expect(archived.body.items.map((c: any) => c.conversation_id)).toEqual([a.body.conversation_id]);
    const after = await say(viewer.token, 'в dev', { conversation_id: a.body.conversation_id });
    expect(after.body.intent.operation).toBe('unknown');

    const hard = await h.request('DELETE', `/api/assistant/conversations/${b.body.conversation_id}?hard=true`, { token: viewer.token });
    expect(hard.body.deleted).toBe('hard');
    expect(
      (await h.request('GET', `/api/assistant/conversations/${b.body.conversation_id}/messages`, { token: viewer.token })).status,
    ).toBe(404);
  });

  it("answers the caller's history across conversations, newest first and paged, archived ones included and nobody else's", async () => {
    const me = await createUserWithRoles(h, 'asst-historian', ['Viewer']);
    const x = await say(me.token, 'help');
    const y = await say(me.token, 'list datasets in dev');
    await say(me.token, 'покажи дашборды в dev', { conversation_id: x.body.conversation_id });
    await say(operator.token, 'help'); // someone else's, later
    expect((await h.request('DELETE', `/api/assistant/conversations/${y.body.conversation_id}`, { token: me.token })).status).toBe(200);

    const first = await h.request('GET', '/api/assistant/history?page_size=4', { token: me.token });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ total: 6, page: 1, page_size: 4, has_next: true });
    const X = x.body.conversation_id;
    const Y = y.body.conversation_id;
    expect(first.body.items.map((m: any) => [m.conversation_id, m.role, m.conversation_archived])).toEqual([
      [X, 'assistant', false],
      [X, 'user', false],
      [Y, 'assistant', true],
      [Y, 'user', true],
    ]);
    expect(first.body.items[1].text).toBe('покажи дашборды в dev');
    const second = await h.request('GET', '/api/assistant/history?page=2&page_size=4', { token: me.token });
    expect(second.body).toMatchObject({ total: 6, page: 2, page_size: 4, has_next: false });
    expect(second.body.items.map((m: any) => [m.conversation_id, m.role])).toEqual([
      [X, 'assistant'],
      [X, 'user'],
    ]);
    expect(second.body.items[1]).toMatchObject({ text: 'help', message_id: expect.any(String), created_at: expect.any(String) });
    // Another person's history holds none of these.
    const theirs = await h.request('GET', '/api/assistant/history?page_size=100', { token: operator.token });
    expect(theirs.body.items.some((m: any) => [X, Y].includes(m.conversation_id))).toBe(false);
    expect((await h.request('GET', '/api/assistant/history?page_size=101', { token: me.token })).status).toBe(400);
  });

  it('keeps each user to their own audit, newest first and paginated', async () => {
    const mine = await auditOf(viewer.token, '?page_size=2');
    expect(mine.page_size).toBe(2);
    expect(mine.items.length).toBeLessThanOrEqual(2);
    const all = await auditOf(viewer.token, '?page_size=100');
    expect(all.items.every((a: any) => a.decision)).toBe(true);
    const times = all.items.map((a: any) => Date.parse(a.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(all.total).toBeGreaterThan(2);
    expect(all.has_next).toBe(false);
    expect(mine.has_next).toBe(true);
  });
});
