// End to end: a Russian command migrates a dashboard from Superset a (6.1.0) to b (6.1.0) after
// its owner confirms, through the real worker, PostgreSQL and Temporal.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createSqliteDatabase, getDashboard, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, waitTask, type SourceFixture } from '../dashboard-migration/support.ts';

const run = inject('supersets') ? describe : describe.skip;
let h: Harness;
let b: SupersetClient;
let src: SourceFixture;
let envA: string;
const P = `as${Date.now().toString(36)}`;

run('assistant: migration a → b from a Russian command', () => {
  beforeAll(async () => {
    h = await createHarness({ worker: true });
    const a = await client('a');
    b = await client('b');
    const dir = path.join(inject('runDir'), P);
    src = await buildSource(a, P, dir, { dashboards: 1 });
    const targetDb = await createSqliteDatabase(b, {
      name: `${P}_warehouse`,
      path: path.join(dir, `${P}-b.db`),
      tables: prefixedTables(P),
    });
    envA = await registerEnvironment(h, 'a', `${P}-dev`);
    const envB = await registerEnvironment(h, 'b', `${P}-prod`);
    const r = await h.request('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
      token: h.adminToken,
      json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
    });
    expect(r.status, r.text).toBe(200);
  }, 240_000);
  afterAll(async () => h?.close());

  it('asks, is confirmed, and the migration finishes with the dashboard in b', async () => {
    const d = src.dashboards[0]!;
    const r = await h.request('POST', '/api/assistant/messages', {
      token: h.adminToken,
      json: { text: `Перенеси дашборд «${d.title}» из ${P}-dev в ${P}-prod` },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      state: 'awaiting_confirmation',
      intent: {
        domain: 'dashboards',
        operation: 'migrate',
        entities: { source_environment: `${P}-dev`, target_environment: `${P}-prod`, dashboards: [d.title], dry_run: false },
        risk_level: 'high',
        requires_confirmation: true,
      },
    });
    expect(r.body.confirmation.summary).toContain(`#${d.id} «${d.title}»`);
    expect(r.body.confirmation.summary).toContain(`из ${P}-dev в ${P}-prod`);

    const c = await h.request('POST', `/api/assistant/confirmations/${r.body.confirmation.id}/confirm`, { token: h.adminToken });
    expect(c.status, c.text).toBe(200);
    const task = await waitTask(h, c.body.task_id);
    expect(task.status, JSON.stringify(task.result?.items?.map((i: any) => [i.error, i.upstream_error]))).toBe('SUCCEEDED');
    expect(task.type).toBe('migration');
    expect(task.params).toMatchObject({ source_env_id: envA, dashboard_ids: [d.id], dry_run: false });
    const [item] = task.result.items;
    expect(item).toMatchObject({ status: 'imported', verification: expect.objectContaining({ ok: true }) });
    const there = (await getDashboard(b, item.dashboard_uuid)).result;
    expect(there.dashboard_title).toBe(d.title);

    // Asking about it in Russian reads the same task.
    const status = await h.request('POST', '/api/assistant/messages', {
      token: h.adminToken,
      json: { text: `статус задачи ${c.body.task_id}` },
    });
    expect(status.body).toMatchObject({ state: 'executed', data: { task: { id: c.body.task_id, status: 'SUCCEEDED' } } });
    // It says what the task verified (issue 50: verified by this task, or carried from an earlier one).
    expect(status.body.text).toContain('Проверка: 1 проверено этой задачей');
  }, 240_000);
});
