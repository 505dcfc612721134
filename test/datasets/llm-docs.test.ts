// LLM documentation against real Superset (6.1.0 with SQLite and with PostgreSQL metadata) and a
// local server speaking the OpenAI chat-completions protocol: suggestions generated per dataset
// with the provider's failures (429 with Retry-After, 500, malformed JSON, a slow answer) kept
// with their dataset; reviewed beside the current values, accepted as suggested or edited into
// Superset, person-written values kept unless asked, undone. The provider's API key: encrypted
// at rest, masked, refused when its base URL moves without it, and found nowhere: answers, logs,
// task rows, task logs, security events or Temporal history.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  comparable,
  createCuratedDataset,
  editDataset,
  expectedAfter,
  HUMAN,
  readDataset,
  type CuratedDataset,
} from '../support/datasets.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, uniquePrefix } from '../support/environments.ts';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';
import { capturedLogs, createHarness, type Harness } from '../support/harness.ts';
import type { RequestOptions } from '../support/http.ts';
import { login, type SupersetClient } from '../support/superset/fixtures.ts';

const S = supersets();
if (!S) console.warn('test/datasets/llm-docs.test.ts skipped: no real Superset (SWITCHYARD_TEST_SUPERSET=off)');

const KEY = `sk-live-${randomBytes(12).toString('hex')}`;
const DEFAULT_KEY = `sk-default-${randomBytes(12).toString('hex')}`;
const OTHER_KEY = `sk-rotated-${randomBytes(12).toString('hex')}`;

describe.runIf(S)('LLM documentation', () => {
  let h: Harness;
  let llm: FakeLlm;
  let clientA: SupersetClient;
  let clientD: SupersetClient;
  let envA: string;
  let envD: string;
  let providerId: string;
  const transcript: string[] = [];
  const ds: Record<'ok' | 'quota' | 'crash' | 'garble' | 'sleepy' | 'onD', CuratedDataset> = {} as never;

  /** Every answer of this file is kept, to be searched for the key at the end. */
  const call = async (method: string, path: string, opts: RequestOptions = {}) => {
    const r = await h.request(method, path, { token: h.adminToken, ...opts });
    transcript.push(`${method} ${path} ${r.status} ${r.text}`);
    return r;
  };

  beforeAll(async () => {
    llm = await startFakeLlm();
    h = await createHarness({ worker: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: DEFAULT_KEY, LLM_MODEL: 'default-model' } });
    const a = superset('a');
    const d = superset('d');
    [clientA, clientD] = await Promise.all([login(a.baseUrl, a.username, a.password), login(d.baseUrl, d.username, d.password)]);
    envA = await createEnvironment(h, { baseUrl: a.baseUrl, username: a.username, password: a.password, timeoutSeconds: 60 });
    envD = await createEnvironment(h, { baseUrl: d.baseUrl, username: d.username, password: d.password, timeoutSeconds: 60 });
    const p = uniquePrefix('ld');
    for (const tag of ['ok', 'quota', 'crash', 'garble', 'sleepy'] as const)
      ds[tag] = await createCuratedDataset(clientA, { prefix: `${p}${tag}`, dataDir: a.dataDir });
    ds.onD = await createCuratedDataset(clientD, { prefix: `${p}ond`, dataDir: d.dataDir });
    llm.behave(`${p}quota`, 'rate_limit_once');
    llm.behave(`${p}crash`, 'error_500_once');
    llm.behave(`${p}garble`, 'malformed_always');
    llm.behave(`${p}sleepy`, 'slow_once');

    llm.apiKey = KEY;
    const r = await call('POST', '/api/admin/llm-providers', {
      json: {
        name: 'Local test model',
        base_url: llm.baseUrl,
        model: 'docs-model',
        api_key: KEY,
        // A hang bound, not a race: the sleepy dataset's first answer never comes (the fake waits for the client to give
        // up), so only it times out, and every other answer has 15 s, far above any run.
        timeout_seconds: 15,
        sample_data_env_ids: [envA],
      },
    });
    expect(r.status, r.text).toBe(201);
    providerId = r.body.id;
  }, 240_000);
  afterAll(async () => {
    clientA?.close();
    clientD?.close();
    await h?.close();
    await llm?.close();
  });

  const generate = async (body: Record<string, unknown>) => {
    const r = await call('POST', '/api/datasets/generate-docs', { json: body });
    expect(r.status, r.text).toBe(202);
    return h.waitForTask(r.body.task_id, undefined, 120_000);
  };

  it('stores suggestions per dataset; 429, 500 and a slow answer are retried, malformed JSON fails only its dataset', async () => {
    const before = await readDataset(clientA, ds.ok.id);
    const ids = [ds.ok.id, ds.quota.id, ds.crash.id, ds.garble.id, ds.sleepy.id];
    const task = await generate({ env_id: envA, dataset_ids: ids, llm_provider: providerId, language: 'en' });
    expect(task.status).toBe('FAILED');
    const byId = Object.fromEntries(task.result.items.map((i: any) => [i.id, i]));
    for (const [tag, attempts] of [
      ['ok', 1],
      ['quota', 2],
      ['crash', 2],
      ['sleepy', 2],
    ] as const) {
      expect(byId[ds[tag].id], tag).toMatchObject({
        kind: 'dataset',
        status: 'suggested',
        outcome: 'succeeded',
        attempts,
        sample_values_sent: true,
      });
      expect(byId[ds[tag].id].suggestions, tag).toBe(6); // the dataset description and its five columns
      expect(byId[ds[tag].id].tokens.total_tokens, tag).toBeGreaterThan(0);
      expect(byId[ds[tag].id].duration_ms, tag).toBeGreaterThan(0);
    }
    const garbled = byId[ds.garble.id];
    expect(garbled).toMatchObject({ status: 'failed', outcome: 'failed', step: 'generate', attempts: 2, suggestions: 0 });
    expect(garbled.error).toMatch(/not valid for the schema, twice: it is not valid JSON/);
    expect(garbled.upstream_error).toEqual({ message: 'I cannot answer in JSON, sorry.', type: 'invalid_answer' });
    expect(garbled.next_actions.map((a: any) => a.action)).toEqual(['choose_model']);
    expect(garbled.tokens.total_tokens).toBeGreaterThan(0);
    expect(task.result.totals).toMatchObject({ requested: 5, suggested: 4, failed: 1, suggestions: 24 });
    expect(task.result.provider).toEqual({ id: providerId, name: 'Local test model', model: 'docs-model' });
    expect(task.result.prompt_version).toBe('dataset-docs/1');
    expect(task.result.totals.tokens.total_tokens).toBe(task.result.items.reduce((n: number, i: any) => n + i.tokens.total_tokens, 0));

    // The 429's Retry-After was honoured: the second request came at least a second after the first.
    const quota = llm.requests.filter((q) => q.dataset === ds.quota.tableName);
    expect(quota.map((q) => q.status)).toEqual([429, 200]);
    // Sample values went out, since the provider may receive this environment's data.
    const sent = JSON.parse(llm.requests.find((q) => q.dataset === ds.ok.tableName)!.body.messages[1].content);
    expect(sent.dataset.columns.find((c: any) => c.name === 'region').sample_values).toEqual(['EMEA', 'NA', 'APAC']);
    expect(sent.dataset.metrics.map((m: any) => m.name).sort()).toEqual(['count', 'total_revenue']);

    // Nothing reached Superset.
    expect(comparable(await readDataset(clientA, ds.ok.id))).toEqual(comparable(before));
    // The dataset's dashboard lists the task; the report offers to retry the failed dataset.
    const history = await call('GET', `/api/dashboards/${ds.ok.dashboardId}/tasks?env_id=${envA}`);
    expect(history.body.items.map((t: any) => [t.id, t.type])).toContainEqual([task.id, 'llm_docs']);
    const report = await call('GET', `/api/reports/${task.id}`);
    const retry = report.body.report.next_actions.find((a: any) => a.action === 'retry_failed');
    expect(retry.request.body).toEqual({ env_id: envA, dataset_ids: [ds.garble.id], llm_provider: providerId, language: 'en' });
  });

  it('gives up fast on a Retry-After beyond the limit and on a provider that keeps failing, with the reason', async () => {
    const p = uniquePrefix('ldx');
    const limited = await createCuratedDataset(clientA, { prefix: `${p}long`, dataDir: superset('a').dataDir });
    llm.behave(`${p}long`, 'rate_limit_long');
    const task = await generate({ env_id: envA, dataset_ids: [limited.id], llm_provider: providerId });
    // Given up at once: the provider was asked once and never again (counted, not timed against the wall clock).
    expect(llm.requests.filter((q) => q.dataset === limited.tableName).map((q) => q.status)).toEqual([429]);
    expect(task.result.items[0]).toMatchObject({
      status: 'failed',
      step: 'generate',
      attempts: 1,
      upstream_error: { status: 429, type: 'rate_limited' },
    });
    expect(task.result.items[0].error).toMatch(/asked to wait 3600 s/);
    expect(task.result.items[0].next_actions[0].action).toBe('retry_later');
  });

  it('lists suggestions beside current values; accepts as suggested and edited, keeps what a person wrote unless asked; undo restores', async () => {
    const before = await readDataset(clientA, ds.ok.id);
    const list = await call('GET', `/api/datasets/${ds.ok.id}/suggestions?env_id=${envA}`);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toMatchObject({
      dataset_id: ds.ok.id,
      dataset_name: ds.ok.tableName,
      dataset_description: HUMAN.datasetDescription,
      total: 6,
    });
    const find = (col: string | null) => list.body.items.find((s: any) => s.column_name === col);
    expect(find(null)).toMatchObject({
      target: 'dataset',
      field: 'description',
      value: `Dataset ${ds.ok.tableName}: daily sales.`,
      current_value: HUMAN.datasetDescription,
      base_value: HUMAN.datasetDescription,
      person_written: true,
      changed_since: false,
      status: 'pending',
      provenance: {
        provider_id: providerId,
        provider_name: 'Local test model',
        model: 'docs-model-2026',
        prompt_version: 'dataset-docs/1',
        language: 'en',
      },
    });
    expect(find(null).provenance.tokens.total_tokens).toBeGreaterThan(0);
    expect(find('revenue')).toMatchObject({ current_value: HUMAN.revenueDescription, person_written: true });
    expect(find('units')).toMatchObject({ current_value: null, person_written: false, value: `Column units of ${ds.ok.tableName}.` });

    // Accept everything pending: what a person wrote stays, the rest is written, one edited on the way.
    const accept = await call('POST', `/api/datasets/${ds.ok.id}/suggestions/accept`, {
      json: {
        env_id: envA,
        items: list.body.items.map((s: any) => ({
          suggestion_id: s.id,
          ...(s.column_name === 'units' ? { value: 'Units sold per day (edited by a reviewer)' } : {}),
        })),
      },
    });
    expect(accept.status, accept.text).toBe(200);
    expect(accept.body.accepted.map((a: any) => [a.column_name, a.edited]).sort()).toEqual([
      ['ds', false],
      ['product', false],
      ['region', false],
      ['units', true],
    ]);
    expect(accept.body.skipped.map((s: any) => s.reason)).toEqual(['person_written', 'person_written']);
    expect(accept.body.change).toMatchObject({
      source: 'suggestions',
      status: 'applied',
      actor: { username: 'admin' },
      verify_problems: [],
    });
    const t = ds.ok.tableName;
    expect(comparable(await readDataset(clientA, ds.ok.id))).toEqual(
      expectedAfter(before, {
        ds: { description: `Column ds of ${t}.` },
        region: { description: `Column region of ${t}.` },
        product: { description: `Column product of ${t}.` },
        units: { description: 'Units sold per day (edited by a reviewer)' },
      }),
    );

    // The person who reviews asks to replace the hand-written ones.
    const over = await call('POST', `/api/datasets/${ds.ok.id}/suggestions/accept`, {
      json: {
        env_id: envA,
        items: [
          { suggestion_id: find('revenue').id, overwrite: true },
          { suggestion_id: find(null).id, overwrite: true, value: 'Daily sales per region and product.' },
        ],
      },
    });
    expect(over.status, over.text).toBe(200);
    expect(over.body.accepted).toHaveLength(2);
    const now = await readDataset(clientA, ds.ok.id);
    expect(now.description).toBe('Daily sales per region and product.');
    expect(now.columns.find((c: any) => c.column_name === 'revenue').description).toBe(`Column revenue of ${t}.`);

    const all = await call('GET', `/api/datasets/${ds.ok.id}/suggestions?env_id=${envA}&status=all`);
    expect(all.body.items.every((s: any) => s.status === 'accepted' && s.decided_by === 'admin' && s.change_id)).toBe(true);
    expect(all.body.items.find((s: any) => s.column_name === 'units').accepted_value).toBe('Units sold per day (edited by a reviewer)');
    expect((await call('GET', `/api/datasets/${ds.ok.id}/suggestions?env_id=${envA}`)).body.total).toBe(0);

    // Undo the overwrite: the hand-written values come back; the first acceptance stays.
    const undo = await call('POST', `/api/datasets/changes/${over.body.change.id}/undo`, { json: {} });
    expect(undo.status, undo.text).toBe(200);
    const restored = await readDataset(clientA, ds.ok.id);
    expect(restored.description).toBe(HUMAN.datasetDescription);
    expect(restored.columns.find((c: any) => c.column_name === 'revenue').description).toBe(HUMAN.revenueDescription);
    expect(restored.columns.find((c: any) => c.column_name === 'units').description).toBe('Units sold per day (edited by a reviewer)');
    // Undoing the first acceptance after someone changed one of its fields needs force.
    await editDataset(clientA, ds.ok.id, ({ columns }) => {
      columns.find((c) => c.column_name === 'ds')!.description = 'A person changed this afterwards';
    });
    const refused = await call('POST', `/api/datasets/changes/${accept.body.change.id}/undo`, { json: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('dataset_changed');
    expect(refused.body.differences[0]).toMatch(/column 'ds' description was changed after this change/);
    const forced = await call('POST', `/api/datasets/changes/${accept.body.change.id}/undo`, { json: { force: true } });
    expect(forced.status, forced.text).toBe(200);
    expect(comparable(await readDataset(clientA, ds.ok.id))).toEqual(comparable(before));
    const changes = await call('GET', `/api/datasets/${ds.ok.id}/changes?env_id=${envA}`);
    expect(changes.body.items.map((c: any) => [c.source, c.status])).toEqual([
      ['undo', 'applied'],
      ['undo', 'applied'],
      ['suggestions', 'undone'],
      ['suggestions', 'undone'],
    ]);
  });

  it('writes into Superset with PostgreSQL metadata, in Russian, without sample rows the provider may not see; a field changed since is skipped', async () => {
    const before = await readDataset(clientD, ds.onD.id);
    const task = await generate({ env_id: envD, dataset_ids: [ds.onD.id], llm_provider: providerId, language: 'ru' });
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.result.items[0]).toMatchObject({ status: 'suggested', sample_values_sent: false });
    const sent = JSON.parse(llm.requests.find((q) => q.dataset === ds.onD.tableName)!.body.messages[1].content);
    expect(sent.dataset.columns.some((c: any) => 'sample_values' in c)).toBe(false);

    const list = await call('GET', `/api/datasets/${ds.onD.id}/suggestions?env_id=${envD}`);
    expect(list.body.items.find((s: any) => s.column_name === 'region').value).toBe(`Столбец region набора ${ds.onD.tableName}.`);
    // A person fills the region description in Superset after the suggestion was made.
    await editDataset(clientD, ds.onD.id, ({ columns }) => {
      columns.find((c) => c.column_name === 'region')!.description = 'Регион продаж (вручную)';
    });
    const accept = await call('POST', `/api/datasets/${ds.onD.id}/suggestions/accept`, { json: { env_id: envD } });
    expect(accept.status, accept.text).toBe(200);
    expect(accept.body.skipped.map((s: any) => s.reason).sort()).toEqual(['changed_since', 'person_written', 'person_written']);
    const after = await readDataset(clientD, ds.onD.id);
    const t = ds.onD.tableName;
    expect(comparable(after)).toEqual(
      expectedAfter(before, {
        ds: { description: `Столбец ds набора ${t}.` },
        product: { description: `Столбец product набора ${t}.` },
        units: { description: `Столбец units набора ${t}.` },
        region: { description: 'Регион продаж (вручную)' },
      }),
    );
    const rejected = await call('POST', `/api/datasets/${ds.onD.id}/suggestions/reject`, { json: { env_id: envD } });
    expect(rejected.body.rejected).toBe(3);
  });

  it('uses the provider of the LLM_* variables as `default`', async () => {
    llm.apiKey = DEFAULT_KEY;
    try {
      const task = await generate({ env_id: envA, dataset_ids: [ds.quota.id], llm_provider: 'default' });
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.result.provider).toEqual({ id: 'default', name: 'default (LLM_BASE_URL)', model: 'default-model' });
      expect(task.result.items[0].sample_values_sent).toBe(false);
    } finally {
      llm.apiKey = KEY;
    }
  });

  it("keeps a provider's key encrypted, masked and bound to its base URL", async () => {
    const row = await h.knex('llm_providers').where({ id: providerId }).first();
    expect(row.api_key_encrypted).not.toContain(KEY);
    const view = await call('GET', '/api/admin/llm-providers');
    expect(view.body.items.find((p: any) => p.id === providerId)).toMatchObject({
      api_key: '********',
      base_url: llm.baseUrl,
      sample_data_env_ids: [envA],
    });

    const moved = await call('PUT', `/api/admin/llm-providers/${providerId}`, { json: { base_url: 'https://llm.attacker.example/v1' } });
    expect(moved.status).toBe(400);
    expect(moved.body.code).toBe('secret_required');
    expect((await h.knex('llm_providers').where({ id: providerId }).first()).base_url).toBe(llm.baseUrl);
    // The same destination spelled differently is no move.
    const same = await call('PUT', `/api/admin/llm-providers/${providerId}`, { json: { base_url: `${llm.baseUrl}/` } });
    expect(same.status, same.text).toBe(200);
    const events = await h.knex('security_events').where({ event_type: 'LLM_PROVIDER_UPDATED' }).orderBy('id');
    expect(events.map((e: any) => e.outcome)).toEqual(['failure', 'success']);

    // A rotated key is tested against the provider; a wrong one is reported, not retried.
    expect((await call('PUT', `/api/admin/llm-providers/${providerId}`, { json: { api_key: OTHER_KEY } })).status).toBe(200);
    const wrong = await call('POST', `/api/admin/llm-providers/${providerId}/test`);
    expect(wrong.body).toMatchObject({ ok: false, error: { kind: 'refused', status: 401 } });
    llm.apiKey = OTHER_KEY;
    const right = await call('POST', `/api/admin/llm-providers/${providerId}/test`);
    expect(right.body).toMatchObject({ ok: true, model: 'docs-model-2026', error: null });
    expect(llm.requests.at(-1)!.authorization).toBe(`Bearer ${OTHER_KEY}`);

    // Admins only; names unique; unknown environments and providers refused.
    const operator = await createUserWithRoles(h, uniquePrefix('op'), ['Operator']);
    expect((await h.request('GET', '/api/admin/llm-providers', { token: operator.token })).status).toBe(403);
    const dup = await call('POST', '/api/admin/llm-providers', {
      json: { name: 'local TEST model', base_url: llm.baseUrl, model: 'm', api_key: 'k' },
    });
    expect(dup.status).toBe(409);
    const badEnv = await call('POST', '/api/admin/llm-providers', {
      json: { name: 'x', base_url: llm.baseUrl, model: 'm', api_key: 'k', sample_data_env_ids: ['00000000-0000-4000-8000-000000000000'] },
    });
    expect(badEnv.status).toBe(400);
    expect((await call('PUT', '/api/admin/llm-providers/00000000-0000-4000-8000-000000000000', { json: { model: 'm' } })).status).toBe(404);
    expect((await call('POST', '/api/admin/llm-providers/nope/test')).status).toBe(404);
  });

  it('finds no API key in answers, logs, task rows, task logs, security events, suggestions or Temporal history', async () => {
    const tasks = await h.knex('tasks').whereIn('type', ['llm_docs']);
    expect(tasks.length).toBeGreaterThanOrEqual(4);
    const histories: string[] = [];
    for (const t of tasks) {
      const history = await h.boot.context.temporal.workflow.getHandle(t.id).fetchHistory();
      histories.push(
        // Payloads as their decoded text (JSON of inputs and results), so a key inside one would be found.
        JSON.stringify(history, (k, v: unknown) =>
          v instanceof Uint8Array
            ? Buffer.from(v).toString('utf8')
            : k === 'data' && typeof v === 'string'
              ? Buffer.from(v, 'base64').toString('utf8')
              : typeof v === 'bigint'
                ? v.toString()
                : v,
        ),
      );
    }
    const haystacks: Record<string, string> = {
      answers: transcript.join('\n'),
      logs: capturedLogs.join(''),
      tasks: JSON.stringify(tasks),
      task_logs: JSON.stringify(await h.knex('task_logs')),
      security_events: JSON.stringify(await h.knex('security_events')),
      suggestions: JSON.stringify(await h.knex('dataset_suggestions')),
      changes: JSON.stringify(await h.knex('dataset_changes')),
      history: histories.join('\n'),
    };
    // The haystacks are real: the history holds the activities' inputs and results.
    expect(haystacks.history).toContain('documentDataset');
    expect(haystacks.history).toContain(providerId);
    expect(transcript.length).toBeGreaterThan(20);
    for (const secret of [KEY, DEFAULT_KEY, OTHER_KEY]) {
      for (const [where, text] of Object.entries(haystacks)) expect(text.includes(secret), `an API key appears in ${where}`).toBe(false);
    }
    // ... while the provider did receive them.
    expect(llm.requests.some((q) => q.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(llm.requests.some((q) => q.authorization === `Bearer ${DEFAULT_KEY}`)).toBe(true);
  });
});
