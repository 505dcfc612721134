// Every operation of the assistant's table, over HTTP: what the answer reports
// (`requires_confirmation`) is what the assistant did: asked to confirm (a pending confirmation,
// nothing started) or ran at once (no confirmation). A task-starting operation plans or starts
// the task kind whose permission it is checked against (TASK_KINDS), never another. The
// environments are the real Superset 6.1.0 a (dev) and b (prod), shared with other test files: the
// dashboard and dataset the commands name are this file's own, under its prefix. No worker: a
// started task only has to exist, of the right kind.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OPERATION_TABLE } from '../../api/assistant/operations/index.ts';
import type { OperationKey } from '../../lib/assistant/operations.ts';
import { client, registerEnvironment } from '../dashboard-migration/support.ts';
import { uniquePrefix } from '../support/environments.ts';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDashboard, createDataset, createSqliteDatabase, defaultTables } from '../support/superset/fixtures.ts';
import { seedReviewSession } from './support.ts';

const enabled = inject('supersets') !== null;
const P = uniquePrefix('aops');
const OPS = `${P} Ops board`;
const ORDERS = `${P}_orders`;
let h: Harness;
let llm: FakeLlm;
let dev: string;
let session: string;

/** One command per operation (two where the risk depends on the entities), in an order where each finds what it needs. */
const COMMANDS: Record<OperationKey, string[]> = {
  'help.capabilities': ['что ты умеешь?'],
  'dashboards.list': ['покажи дашборды в dev'],
  'dashboards.search': [`find dashboard "${P} Ops" in dev`],
  'datasets.list': ['list datasets in dev'],
  'datasets.search': [`найди датасеты ${ORDERS} в dev`],
  'dashboards.migrate': [`пробный перенос дашборда «${OPS}» из dev в prod`, `migrate dashboard "${OPS}" from dev to prod`],
  'tasks.status': ['статус последней задачи'],
  'tasks.logs': ['logs of my last task'],
  'dashboards.backup': [`сделай бэкап дашборда «${OPS}» в dev`],
  'datasets.generate_docs': [`generate docs for dataset ${ORDERS} in dev`],
  'dashboards.validate': ['проверь dev', 'validate dev'],
  'datasets.impact': [`what uses ${ORDERS} in dev`, `что использует ${ORDERS} в dev`],
  'git.status': [`git статус дашборда «${OPS}» в dev`],
  'git.commit': [`закоммить дашборд «${OPS}» в dev с сообщением «from the assistant»`],
  'git.deploy': [`задеплой дашборд «${OPS}» из dev в prod`],
  'git.open_pr': [`открой PR для дашборда «${OPS}» из dev в prod`, `open a PR for dashboard "${OPS}" from dev to prod`],
  'dataset_review.show': ['покажи сессию'],
  'dataset_review.set_field': ['поле region означает регион продаж'],
  'dataset_review.approve_mappings': ['approve the mappings'],
  'dataset_review.answer': ['ответ: регион продаж'],
};

beforeAll(async () => {
  if (!enabled) return;
  llm = await startFakeLlm();
  const [harness, a] = await Promise.all([
    createHarness({ env: { LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-operations-test-key', LLM_MODEL: 'default-model' } }),
    client('a'),
  ]);
  h = harness;
  // The dashboard and the orders dataset the commands name, in a (one write after another: its metadata is SQLite).
  const ops = (await createDashboard(a, { title: OPS, slug: `${P}-ops-board` })).id;
  const orders = defaultTables()
    .filter((t) => t.name === 'sales')
    .map((t) => ({ ...t, name: ORDERS }));
  const db = await createSqliteDatabase(a, { name: `${P} analytics`, path: path.join(inject('runDir'), P, 'dev.db'), tables: orders });
  await createDataset(a, { database: db.id, tableName: ORDERS });
  dev = await registerEnvironment(h, 'a', 'dev');
  await registerEnvironment(h, 'b', 'prod');
  // A repository with a commit, for the deploy; a review session of the admin's, for the bound commands.
  const admin = h.as(h.adminToken);
  expect(
    (await admin('PATCH', '/api/profile/preferences', { json: { git_username: 'Admin', git_email: 'admin@example.com' } })).status,
  ).toBe(200);
  expect((await admin('POST', `/api/git/dashboards/${ops}/init`, { json: { env_id: dev } })).status).toBe(200);
  expect((await admin('POST', `/api/git/dashboards/${ops}/commit`, { json: { env_id: dev, message: 'first' } })).status).toBe(200);
  const me = await admin('GET', '/api/auth/me');
  session = await seedReviewSession(h.knex, (me.body as { id: string }).id, 'admin');
}, 180_000);
afterAll(async () => {
  await h?.close();
  await llm?.close();
});

const counts = async () => ({
  tasks: Number((await h.knex('tasks').count<{ count: string }[]>('* as count'))[0]!.count),
  confirmations: Number((await h.knex('assistant_confirmations').count<{ count: string }[]>('* as count'))[0]!.count),
});

describe.runIf(enabled)('every operation does what it reports', () => {
  it('has a command for every operation of the table', () => {
    expect(Object.keys(COMMANDS).sort()).toEqual(Object.keys(OPERATION_TABLE).sort());
  });

  const cases = Object.entries(COMMANDS).flatMap(([key, texts]) => texts.map((text) => [key as OperationKey, text] as const));
  it.each(cases)('%s: "%s"', async (key, text) => {
    const op = OPERATION_TABLE[key];
    const before = await counts();
    const r = await h.request('POST', '/api/assistant/messages', {
      token: h.adminToken,
      json: { text, ...(key.startsWith('dataset_review.') ? { dataset_review_session_id: session } : {}) },
    });
    expect(r.status, r.text).toBe(200);
    expect(`${r.body.intent.domain}.${r.body.intent.operation}`).toBe(key);
    const after = await counts();
    const task = 'task' in op.access ? op.access.task : undefined;
    if (r.body.intent.requires_confirmation) {
      // Asked: a pending confirmation, nothing started.
      expect(r.body.state, r.text).toBe('awaiting_confirmation');
      expect(r.body.task_id).toBeUndefined();
      expect(after).toEqual({ tasks: before.tasks, confirmations: before.confirmations + 1 });
      const row = await h.knex('assistant_confirmations').where({ id: r.body.confirmation.id }).first();
      expect(row.status).toBe('pending');
      if (task) expect(row.action).toMatchObject({ type: 'task', kind: task });
      else expect(row.action.type).not.toBe('task');
    } else {
      // Ran at once: no confirmation; a task it started is of its own kind.
      expect(['executed', 'answered'], r.text).toContain(r.body.state);
      expect(r.body.confirmation).toBeUndefined();
      expect(after.confirmations).toBe(before.confirmations);
      if (r.body.task_id) {
        expect(task).toBeDefined();
        expect((await h.knex('tasks').where({ id: r.body.task_id }).first()).type).toBe(task);
      } else expect(after.tasks).toBe(before.tasks);
    }
  });
});
