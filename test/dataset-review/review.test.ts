// Dataset review against real Superset: a permalink with two filter values on a virtual dataset
// whose SQL reads filter_values/url_param, recovered whole; the preview's row count equal to the
// same SQL run in SQL Lab; a broken link recovered partially; launch writing into the real dataset
// (6.1.0 on SQLite and on PostgreSQL metadata) and undone; the 403/404/409 the spec names;
// concurrent writers of one version; a dictionary version marking unlocked fields for review.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOwnedSessionForAssistant, ReviewSessionStore } from '../../db/dataset-review/sessions.ts';
import { readDataset } from '../support/datasets.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { login, type SupersetClient } from '../support/superset/fixtures.ts';
import { createReviewFixture, FILTER_PRODUCT, FILTER_REGION, type ReviewFixture } from './support.ts';

const S = supersets();
if (!S) console.warn('test/dataset-review/review.test.ts skipped: no real Superset (SWITCHYARD_TEST_SUPERSET=off)');

const BASE = '/api/dataset-review/sessions';

function csvForm(text: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/csv' }), 'terms.csv');
  return form;
}

describe.runIf(S)('dataset review against real Superset', () => {
  let h: Harness;
  let analyst: { id: string; token: string };
  let other: { id: string; token: string };
  let viewer: { id: string; token: string };
  let manager: { id: string; token: string };

  beforeAll(async () => {
    h = await createHarness({ worker: true });
    const p = uniquePrefix('rv');
    analyst = await createUserWithRoles(h, `${p}analyst`, ['Operator']);
    other = await createUserWithRoles(h, `${p}other`, ['Operator']);
    viewer = await createUserWithRoles(h, `${p}viewer`, ['Viewer']);
    manager = await createUserWithRoles(h, `${p}manager`, ['ReleaseManager']);
  });
  afterAll(async () => {
    await h?.close();
  });

  const call = (token: string) => (method: string, path: string, json?: unknown) =>
    h.request(method, path, { token, ...(json === undefined ? {} : { json }) });

  async function start(token: string, envId: string, link: string) {
    const r = await call(token)('POST', BASE, { env_id: envId, link });
    expect(r.status, r.text).toBe(201);
    return r.body;
  }

  /** Approve, preview, launch as `token` (the owner); the finished task, and the 202's body as `accepted`. */
  async function approvePreviewLaunch(token: string, session: any) {
    const as = call(token);
    let r = await as('POST', `${BASE}/${session.id}/mappings/approve`, { version: session.version });
    expect(r.status, r.text).toBe(200);
    r = await as('POST', `${BASE}/${session.id}/preview`, { version: r.body.version });
    expect(r.status, r.text).toBe(200);
    expect(r.body.preview.status, JSON.stringify(r.body.preview)).toBe('succeeded');
    const launched = await as('POST', `${BASE}/${session.id}/launch`, { version: r.body.version });
    expect(launched.status, launched.text).toBe(202);
    return { ...(await h.waitForTask(launched.body.task_id)), accepted: launched.body };
  }

  describe('Superset a (6.1.0, SQLite metadata)', () => {
    let client: SupersetClient;
    let envId: string;
    let fx: ReviewFixture;
    let baseUrl: string;

    beforeAll(async () => {
      const inst = superset('a');
      baseUrl = inst.baseUrl;
      client = await login(inst.baseUrl, inst.username, inst.password);
      envId = await createEnvironment(h, { baseUrl: inst.baseUrl, username: inst.username, password: inst.password, timeoutSeconds: 60 });
      fx = await createReviewFixture(client, { prefix: uniquePrefix('rva'), dataDir: inst.dataDir, baseUrl: inst.baseUrl });
    });
    afterAll(() => client?.close());

    it('recovers a permalink whole: dashboard, dataset, both filters with raw and normalised values, template variables, mappings, fields', async () => {
      const s = await start(analyst.token, envId, fx.permalinkUrl);
      expect(s.state).toBe('ready');
      expect(s.recovery_markers).toEqual([]);
      expect(s.link_kind).toBe('permalink');
      expect(s.dashboard).toMatchObject({ id: fx.dashboardId });
      expect(s.dataset).toMatchObject({ id: fx.datasetId, database_id: fx.databaseId, kind: 'virtual' });
      const byId = Object.fromEntries(s.imported_filters.map((f: any) => [f.id, f]));
      expect(byId[FILTER_REGION]).toMatchObject({
        name: 'Region',
        column: 'region',
        raw_value: ['EMEA', 'NA'],
        normalized: [{ col: 'region', op: 'IN', val: ['EMEA', 'NA'] }],
        value_source: 'permalink',
        column_in_dataset: true,
      });
      expect(byId[FILTER_PRODUCT]).toMatchObject({
        column: 'product',
        raw_value: ['widget'],
        value_source: 'permalink',
        column_in_dataset: true,
      });
      expect(s.template_variables).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'region', kind: 'filter_values' }),
          expect.objectContaining({ name: 'product', kind: 'url_param' }),
        ]),
      );
      const mapping = Object.fromEntries(s.mappings.map((m: any) => [m.filter_id, m]));
      expect(mapping[FILTER_REGION]).toMatchObject({
        variable: 'region',
        variable_kind: 'filter_values',
        origin: 'proposed',
        approved: false,
      });
      expect(mapping[FILTER_PRODUCT]).toMatchObject({
        variable: 'product',
        variable_kind: 'url_param',
        origin: 'proposed',
        approved: false,
      });
      expect(s.fields.map((f: any) => `${f.kind}:${f.name}`)).toEqual(
        expect.arrayContaining(['column:region', 'column:product', 'column:units']),
      );
      // Nothing describes these columns yet: explicitly unresolved, and the clarification asks.
      expect(s.fields.find((f: any) => f.name === 'units')).toMatchObject({ provenance: 'unresolved', status: 'unresolved', label: null });

      // Owned: the list has it for its owner only; another user gets 404, a viewer cannot start one.
      const mine = await call(analyst.token)('GET', BASE);
      expect(mine.body.items.map((i: any) => i.id)).toContain(s.id);
      expect((await call(other.token)('GET', BASE)).body.items.map((i: any) => i.id)).not.toContain(s.id);
      for (const [m, p, b] of [
        ['GET', `${BASE}/${s.id}`, undefined],
        ['PATCH', `${BASE}/${s.id}`, { version: s.version, title: 'x' }],
        ['GET', `${BASE}/${s.id}/clarification`, undefined],
        ['GET', `${BASE}/${s.id}/exports/documentation`, undefined],
        ['GET', `${BASE}/${s.id}/exports/validation`, undefined],
        ['POST', `${BASE}/${s.id}/preview`, { version: s.version }],
      ] as const) {
        const r = await call(other.token)(m, p, b);
        expect(r.status, `${m} ${p}: ${r.text}`).toBe(404);
      }
      const denied = await call(viewer.token)('POST', BASE, { env_id: envId, link: fx.permalinkUrl });
      expect(denied.status).toBe(403);
      expect((await call(analyst.token)('GET', `${BASE}/${s.id}`)).body.version).toBe(s.version);

      // What the assistant gets: the owner's session only, with the filters' values masked.
      const store = new ReviewSessionStore(h.knex);
      expect(await loadOwnedSessionForAssistant(store, s.id, { owner_id: other.id })).toBeUndefined();
      const bound = await loadOwnedSessionForAssistant(store, s.id, { owner_id: analyst.id });
      expect(bound?.id).toBe(s.id);
      expect(bound?.imported_filters.map((f) => f.raw_value)).toEqual(['***', '***']);
      expect(JSON.stringify(bound?.imported_filters)).not.toMatch(/EMEA|widget/);
    });

    it('asks which variable an unmapped filter fills, and maps it from the answer (a manual mapping, approved anew)', async () => {
      const s = await start(analyst.token, envId, fx.permalinkUrl);
      const as = call(analyst.token);
      const region = s.mappings.find((m: any) => m.filter_id === FILTER_REGION);
      let r = await as('PATCH', `${BASE}/${s.id}/mappings/${region.id}`, { version: s.version, variable: null });
      expect(r.status, r.text).toBe(200);
      expect(r.body.mapping).toMatchObject({ variable: null, origin: 'manual', approved: false });
      const unknown = await as('PATCH', `${BASE}/${s.id}/mappings/${region.id}`, { version: r.body.version, variable: 'nope' });
      expect(unknown.status).toBe(400);
      const c = (await as('GET', `${BASE}/${s.id}/clarification`)).body;
      expect(c.question).toMatchObject({ key: `filter_mapping:${FILTER_REGION}`, kind: 'filter_mapping' });
      expect(c.question.options.map((o: any) => o.value)).toEqual(['filter_values:region', 'none']);
      r = await as('POST', `${BASE}/${s.id}/clarification/answers`, {
        version: c.version,
        question_key: c.question.key,
        answer: { option: 'filter_values:region' },
      });
      expect(r.status, r.text).toBe(200);
      const after = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(after.mappings.find((m: any) => m.filter_id === FILTER_REGION)).toMatchObject({
        variable: 'region',
        variable_kind: 'filter_values',
        origin: 'manual',
        approved: false,
      });
      // A manual value replaces the imported one in the snapshot.
      r = await as('PATCH', `${BASE}/${s.id}/mappings/${region.id}`, { version: after.version, value: ['APAC'] });
      expect(r.status, r.text).toBe(200);
      const p = await as('POST', `${BASE}/${s.id}/preview`, { version: r.body.version });
      expect(p.body.preview.snapshot.filters).toEqual(expect.arrayContaining([{ col: 'region', op: 'IN', val: ['APAC'] }]));
      expect(p.body.preview.rows.every((row: any) => row.region === 'APAC' && row.product === 'widget')).toBe(true);
      expect(p.body.preview.row_count).toBe(2);
    });

    it('previews the exact query: the row count equals the compiled SQL run in SQL Lab, and the version moves so launch can follow', async () => {
      const s = await start(analyst.token, envId, fx.permalinkUrl);
      const r = await call(analyst.token)('POST', `${BASE}/${s.id}/preview`, { version: s.version });
      expect(r.status, r.text).toBe(200);
      const p = r.body.preview;
      expect(p.status, JSON.stringify(p)).toBe('succeeded');
      expect(r.body.version).toBe(s.version + 1);
      expect(p.snapshot.filters).toEqual(
        expect.arrayContaining([
          { col: 'region', op: 'IN', val: ['EMEA', 'NA'] },
          { col: 'product', op: 'IN', val: ['widget'] },
        ]),
      );
      expect(p.snapshot.template_params).toEqual({ product: 'widget' });
      // The Jinja was rendered by Superset: both variables filled.
      // What ran is lib/sql's rendering of the compiled query (names quoted, no comments).
      expect(p.compiled_sql).toMatch(/"?region"? IN \('EMEA', 'NA'\)/);
      expect(p.compiled_sql).toMatch(/"?product"? = 'widget'/);
      expect(p.row_count).toBe(4);
      expect(p.columns).toEqual(expect.arrayContaining(['region', 'product', 'units']));
      expect(p.rows.every((row: any) => ['EMEA', 'NA'].includes(row.region) && row.product === 'widget')).toBe(true);
      const lab = await client.executeSql({ databaseId: fx.databaseId, sql: p.compiled_sql, limit: 1000 });
      expect(lab.rows.length).toBe(p.row_count);
      // The stored session holds the preview of the version it created.
      const again = await call(analyst.token)('GET', `${BASE}/${s.id}`);
      expect(again.body.preview).toMatchObject({ status: 'succeeded', at_version: r.body.version, row_count: 4 });
    });

    it('keeps a broken link usable: a deleted chart and an unreadable permalink leave recovery-required with markers, never a failure', async () => {
      // Its own dashboard, so the other tests keep both charts.
      const inst = superset('a');
      const broken = await createReviewFixture(client, { prefix: uniquePrefix('rvb'), dataDir: inst.dataDir, baseUrl });
      await client.request('DELETE', `/api/v1/chart/${broken.spareChartId}`);
      const s = await start(analyst.token, envId, `${baseUrl}/superset/dashboard/${broken.dashboardId}/`);
      expect(s.state).toBe('recovery-required');
      expect(s.recovery_markers).toEqual([expect.objectContaining({ kind: 'chart', ref: String(broken.spareChartId) })]);
      expect(s.dataset).toMatchObject({ id: broken.datasetId });
      expect(s.charts).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: broken.spareChartId, missing: true }),
          expect.objectContaining({ id: broken.chartId, missing: false }),
        ]),
      );
      // No permalink: the filters are imported without values, and a preview adds nothing for them.
      expect(s.imported_filters.every((f: any) => f.value_source === 'none' && f.raw_value === null)).toBe(true);
      const p = await call(analyst.token)('POST', `${BASE}/${s.id}/preview`, { version: s.version });
      expect(p.body.preview).toMatchObject({ status: 'succeeded', row_count: 12 });
      expect(p.body.preview.snapshot.filters).toEqual([]);

      const slug = await start(analyst.token, envId, `${baseUrl}/superset/dashboard/${broken.slug}/`);
      expect(slug.link_kind).toBe('dashboard_slug');
      expect(slug.dashboard.id).toBe(broken.dashboardId);
      expect(slug.state).toBe('recovery-required');

      const unreadable = await start(analyst.token, envId, `${baseUrl}/superset/dashboard/p/AbCdEfGhIjKlMn/`);
      expect(unreadable.state).toBe('recovery-required');
      expect(unreadable.recovery_markers).toEqual([expect.objectContaining({ kind: 'permalink', ref: 'AbCdEfGhIjKlMn' })]);
      expect(unreadable.recovery_markers[0].upstream_error).toBeTruthy();
      expect((await call(analyst.token)('GET', `${BASE}/${unreadable.id}/exports/validation`)).body.passed).toBe(false);

      const bad = await call(analyst.token)('POST', BASE, { env_id: envId, link: `${baseUrl}/explore/?slice_id=1` });
      expect(bad.status).toBe(400);
      const unknownEnv = await call(analyst.token)('POST', BASE, { env_id: '00000000-0000-4000-8000-000000000000', link: fx.permalinkUrl });
      expect(unknownEnv.status).toBe(404);
    });

    it('names a missing dataset as such when the preview fails, never "dashboard not found"', async () => {
      const inst = superset('a');
      const gone = await createReviewFixture(client, { prefix: uniquePrefix('rvg'), dataDir: inst.dataDir, baseUrl });
      const s = await start(analyst.token, envId, `${baseUrl}/superset/dashboard/${gone.dashboardId}/`);
      await client.request('DELETE', `/api/v1/chart/${gone.chartId}`);
      await client.request('DELETE', `/api/v1/chart/${gone.spareChartId}`);
      await client.request('DELETE', `/api/v1/dataset/${gone.datasetId}`);
      const r = await call(analyst.token)('POST', `${BASE}/${s.id}/preview`, { version: s.version });
      expect(r.status, r.text).toBe(200);
      expect(r.body.preview).toMatchObject({ status: 'failed', missing: 'dataset' });
      expect(r.body.preview.error).toMatch(new RegExp(`dataset ${gone.datasetId} not found`));
      expect(r.body.preview.error).not.toMatch(/dashboard/i);
    });

    it("asks which dataset when the dashboard shows two, records the answer, then recovers it; a failing query gives a failed preview with the database's reason", async () => {
      const inst = superset('a');
      const two = await createReviewFixture(client, { prefix: uniquePrefix('rv2'), dataDir: inst.dataDir, baseUrl, secondDataset: true });
      const s = await start(analyst.token, envId, `${baseUrl}/superset/dashboard/${two.dashboardId}/`);
      expect(s.dataset).toBeNull();
      expect(s.candidate_datasets.map((d: any) => d.id).sort()).toEqual([two.datasetId, two.secondDatasetId].sort());
      expect(s.fields).toEqual([]);
      const as = call(analyst.token);
      const c = (await as('GET', `${BASE}/${s.id}/clarification`)).body;
      expect(c).toMatchObject({ blocking: true, question: { key: 'dataset_choice', kind: 'dataset_choice' } });
      expect(c.question.options.map((o: any) => Number(o.value)).sort()).toEqual([two.datasetId, two.secondDatasetId].sort());
      const noPreview = await as('POST', `${BASE}/${s.id}/preview`, { version: s.version });
      expect(noPreview.status).toBe(409);
      expect(noPreview.body.code).toBe('no_dataset');
      const bad = await as('POST', `${BASE}/${s.id}/clarification/answers`, {
        version: s.version,
        question_key: 'dataset_choice',
        answer: { option: '999999' },
      });
      expect(bad.status).toBe(400);
      const r = await as('POST', `${BASE}/${s.id}/clarification/answers`, {
        version: s.version,
        question_key: 'dataset_choice',
        answer: { option: String(two.datasetId) },
        feedback: 'useful',
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.version).toBe(s.version + 1);
      expect(r.body.question?.key).not.toBe('dataset_choice');
      const chosen = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(chosen.dataset).toMatchObject({ id: two.datasetId, kind: 'virtual' });
      expect(chosen.fields.map((f: any) => f.name)).toEqual(expect.arrayContaining(['region', 'product', 'units']));
      expect(chosen.mappings.find((m: any) => m.filter_id === FILTER_REGION)).toMatchObject({
        variable: 'region',
        variable_kind: 'filter_values',
      });
      expect(chosen.imported_filters.every((f: any) => f.column_in_dataset === true)).toBe(true);
      const records = await h.knex('review_clarifications').where({ session_id: s.id });
      expect(records).toEqual([
        expect.objectContaining({
          question_key: 'dataset_choice',
          answer: { option: String(two.datasetId) },
          feedback: 'useful',
          session_version: s.version,
        }),
      ]);

      // The table disappears from the database: Superset still compiles, the database refuses to run it.
      const { DatabaseSync } = await import('node:sqlite');
      const db = new DatabaseSync(two.dbPath);
      db.exec(`DROP TABLE "${two.tableName}"`);
      db.close();
      const p = await as('POST', `${BASE}/${s.id}/preview`, { version: chosen.version });
      expect(p.status, p.text).toBe(200);
      expect(p.body.preview).toMatchObject({ status: 'failed', step: 'run', missing: null, row_count: null });
      expect(p.body.preview.error).toMatch(/no such table/i);
      expect(p.body.version).toBe(chosen.version + 1);
      const v = (await as('GET', `${BASE}/${s.id}/exports/validation`)).body;
      expect(v.checks.find((x: any) => x.id === 'preview')).toMatchObject({
        passed: false,
        detail: expect.stringMatching(/no such table/i),
      });
    });

    it('refuses stale versions with 409 version_conflict and current_version; of concurrent writers exactly one wins', async () => {
      const s = await start(analyst.token, envId, fx.permalinkUrl);
      const as = call(analyst.token);
      const writers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => as('PATCH', `${BASE}/${s.id}`, { version: s.version, title: `writer ${i}` })),
      );
      const won = writers.filter((r) => r.status === 200);
      const lost = writers.filter((r) => r.status === 409);
      expect(won.length).toBe(1);
      expect(lost.length).toBe(5);
      for (const r of lost) expect(r.body).toMatchObject({ code: 'version_conflict', current_version: s.version + 1 });
      const now = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(now.version).toBe(s.version + 1);
      expect(now.title).toBe(won[0]!.body.title);

      // Field and mapping writers race the same way.
      const field = now.fields.find((f: any) => f.name === 'units');
      const mapping = now.mappings[0];
      const mixed = await Promise.all([
        as('PUT', `${BASE}/${s.id}/fields/${field.id}`, { version: now.version, label: 'Units A' }),
        as('PUT', `${BASE}/${s.id}/fields/${field.id}`, { version: now.version, label: 'Units B' }),
        as('PATCH', `${BASE}/${s.id}/mappings/${mapping.id}`, { version: now.version, variable: null }),
        as('POST', `${BASE}/${s.id}/mappings/approve`, { version: now.version }),
        as('POST', `${BASE}/${s.id}/fields/${field.id}/lock`, { version: now.version }),
      ]);
      expect(mixed.filter((r) => r.status === 200).length).toBe(1);
      expect(
        mixed
          .filter((r) => r.status === 409)
          .every((r) => r.body.code === 'version_conflict' && r.body.current_version === now.version + 1),
      ).toBe(true);

      // Every mutation the spec names refuses a stale version, and changes nothing.
      const stale = now.version;
      const fresh = (await as('GET', `${BASE}/${s.id}`)).body;
      const before = JSON.stringify({ f: fresh.fields, m: fresh.mappings, t: fresh.title });
      for (const [m, p, b] of [
        ['PATCH', `${BASE}/${s.id}`, { version: stale, note: 'n' }],
        ['PATCH', `${BASE}/${s.id}`, { version: 2_147_483_647, note: 'the largest version there is' }],
        ['PUT', `${BASE}/${s.id}/fields/${field.id}`, { version: stale, description: 'd' }],
        ['POST', `${BASE}/${s.id}/fields/${field.id}/lock`, { version: stale }],
        ['POST', `${BASE}/${s.id}/fields/${field.id}/unlock`, { version: stale }],
        ['POST', `${BASE}/${s.id}/fields/${field.id}/feedback`, { version: stale, verdict: 'wrong' }],
        ['PATCH', `${BASE}/${s.id}/mappings/${mapping.id}`, { version: stale, value: ['NA'] }],
        ['POST', `${BASE}/${s.id}/mappings/approve`, { version: stale }],
        ['POST', `${BASE}/${s.id}/preview`, { version: stale }],
        ['POST', `${BASE}/${s.id}/clarification/answers`, { version: stale, question_key: 'x', answer: { option: 'skip' } }],
        ['DELETE', `${BASE}/${s.id}?version=${stale}`, undefined],
      ] as const) {
        const r = await as(m, p, b);
        expect(r.status, `${m} ${p}: ${r.text}`).toBe(409);
        expect(r.body).toMatchObject({ code: 'version_conflict', current_version: fresh.version });
      }
      const launchStale = await call(manager.token)('POST', `${BASE}/${s.id}/launch`, { version: stale });
      expect(launchStale.status).toBe(404); // the manager does not own it
      const after = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(after.version).toBe(fresh.version);
      expect(JSON.stringify({ f: after.fields, m: after.mappings, t: after.title })).toBe(before);
      expect((await as('DELETE', `${BASE}/${s.id}?version=${fresh.version}`)).status).toBe(204);
      expect((await as('GET', `${BASE}/${s.id}`)).status).toBe(404);
    });

    it('fields: a manual override locks and records who; feedback is kept apart; a new dictionary version marks unlocked fields for review and keeps locked ones', async () => {
      const admin = call(h.adminToken);
      const dict = await admin('POST', '/api/dataset-review/dictionaries', { name: uniquePrefix('Sales terms') });
      expect(dict.status, dict.text).toBe(201);
      const v1 = await h.request('POST', `/api/dataset-review/dictionaries/${dict.body.id}/versions`, {
        token: h.adminToken,
        multipart: csvForm('column_name,verbose_name,description\nregion,Region,Sales region\nunit,Unit count,Units per order line\n'),
      });
      expect(v1.status, v1.text).toBe(201);
      expect(v1.body).toMatchObject({ version: 1, entry_count: 2 });
      expect((await call(analyst.token)('POST', '/api/dataset-review/dictionaries', { name: 'nope' })).status).toBe(403);

      const s = await start(analyst.token, envId, fx.permalinkUrl);
      const f = (n: string, body = s) => body.fields.find((x: any) => x.name === n);
      expect(f('region')).toMatchObject({ provenance: 'dictionary', label: 'Region', description: 'Sales region', status: 'proposed' });
      // "units" is no exact entry: the fuzzy "unit" candidate, ranked below an exact match would be.
      expect(f('units')).toMatchObject({ provenance: 'fuzzy', label: 'Unit count' });
      expect(f('product')).toMatchObject({ provenance: 'unresolved', status: 'unresolved' });

      const as = call(analyst.token);
      let r = await as('PUT', `${BASE}/${s.id}/fields/${f('units').id}`, {
        version: s.version,
        label: 'Units sold',
        description: 'Units on the order line',
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.field).toMatchObject({
        provenance: 'manual',
        status: 'manual',
        locked: true,
        label: 'Units sold',
        updated_by: expect.stringContaining('analyst'),
      });
      expect(r.body.field.source).toMatchObject({ set_by: expect.stringContaining('analyst'), set_at: expect.any(String) });
      r = await as('POST', `${BASE}/${s.id}/fields/${f('region').id}/feedback`, {
        version: r.body.version,
        verdict: 'useful',
        comment: 'right term',
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.feedback).toMatchObject({
        verdict: 'useful',
        comment: 'right term',
        value_at_feedback: { label: 'Region', provenance: 'dictionary' },
      });
      expect(r.body.field.label).toBe('Region');

      const v2 = await h.request('POST', `/api/dataset-review/dictionaries/${dict.body.id}/versions`, {
        token: h.adminToken,
        multipart: csvForm('column_name,verbose_name,description\nregion,Sales region,Region of the sale\nunits,Units,Number of units\n'),
      });
      expect(v2.status, v2.text).toBe(201);
      expect(v2.body).toMatchObject({ version: 2, sessions_updated: expect.any(Number) });
      const after = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(after.version).toBeGreaterThan(r.body.version);
      expect(f('region', after)).toMatchObject({
        status: 'needs_review',
        label: 'Region',
        pending_candidate: { provenance: 'dictionary', label: 'Sales region' },
      });
      expect(f('units', after)).toMatchObject({ status: 'manual', locked: true, label: 'Units sold', pending_candidate: null });
      const validation = (await as('GET', `${BASE}/${s.id}/exports/validation`)).body;
      expect(validation.checks.find((c: any) => c.id === 'fields_reviewed')).toMatchObject({ passed: false });

      // Clarification: one question at a time; the answer is recorded with its feedback before the session moves.
      let c = (await as('GET', `${BASE}/${s.id}/clarification`)).body;
      expect(c.blocking).toBe(true);
      expect(c.question).toMatchObject({ kind: 'field_review', ref: f('region', after).id });
      const wrongKey = await as('POST', `${BASE}/${s.id}/clarification/answers`, {
        version: after.version,
        question_key: 'dataset_choice',
        answer: { option: 'x' },
      });
      expect(wrongKey.status).toBe(409);
      expect(wrongKey.body.code).toBe('not_current_question');
      r = await as('POST', `${BASE}/${s.id}/clarification/answers`, {
        version: after.version,
        question_key: c.question.key,
        answer: { option: 'accept_candidate' },
        feedback: 'useful',
        feedback_comment: 'clear question',
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.version).toBe(after.version + 1);
      expect(r.body.question?.key).not.toBe(c.question.key);
      const answered = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(f('region', answered)).toMatchObject({ status: 'proposed', label: 'Sales region', provenance: 'dictionary' });
      const rows = await h.knex('review_clarifications').where({ session_id: s.id });
      expect(rows).toEqual([
        expect.objectContaining({
          question_key: c.question.key,
          feedback: 'useful',
          feedback_comment: 'clear question',
          session_version: after.version,
        }),
      ]);
      // Work through what is left: the unresolved product field.
      c = r.body;
      while (c.question) {
        const next = await as('POST', `${BASE}/${s.id}/clarification/answers`, {
          version: c.version,
          question_key: c.question.key,
          answer:
            c.question.kind === 'field_meaning'
              ? { option: 'set', label: 'Product', description: 'Product line' }
              : { option: c.question.options.at(-1).value },
        });
        expect(next.status, next.text).toBe(200);
        c = next.body;
      }
      expect(c).toMatchObject({ blocking: false, question: null, remaining: 0 });
      const doc = await as('GET', `${BASE}/${s.id}/exports/documentation`);
      expect(doc.status).toBe(200);
      expect(doc.headers.get('content-type')).toMatch(/text\/markdown/);
      expect(doc.text).toContain('| column | units | Units sold | Units on the order line | manual | manual (locked) |');
      expect(doc.text).toContain('| column | product | Product | Product line | manual |');
      expect(doc.text).toContain('Region');
    });

    it('launch needs dataset_review:LAUNCH, approved mappings and a preview of this version; it writes into the dataset, saves the query, hands off, and undo restores', async () => {
      // The operator may manage but not launch.
      const op = await start(analyst.token, envId, fx.permalinkUrl);
      const denied = await call(analyst.token)('POST', `${BASE}/${op.id}/launch`, { version: op.version });
      expect(denied.status).toBe(403);

      const s = await start(manager.token, envId, fx.permalinkUrl);
      const as = call(manager.token);
      let r = await as('POST', `${BASE}/${s.id}/launch`, { version: s.version });
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('mappings_unapproved');
      const units = s.fields.find((f: any) => f.name === 'units');
      r = await as('PUT', `${BASE}/${s.id}/fields/${units.id}`, {
        version: s.version,
        label: 'Units sold',
        description: 'Units on the order line',
      });
      r = await as('POST', `${BASE}/${s.id}/mappings/approve`, { version: r.body.version });
      r = await as('POST', `${BASE}/${s.id}/launch`, { version: r.body.version });
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('preview_required');

      const before = await readDataset(client, fx.datasetId);
      const task = await approvePreviewLaunch(manager.token, (await as('GET', `${BASE}/${s.id}`)).body);
      expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
      expect(task.type).toBe('dataset_launch');
      const item = task.result.items[0];
      expect(item).toMatchObject({ kind: 'dataset', id: fx.datasetId, status: 'updated', outcome: 'succeeded' });
      expect(item.fields_written).toBeGreaterThanOrEqual(2);
      // The 202 itself answered the audited handoff: its audit record, who launched, what will be created where.
      expect(task.accepted.handoff).toMatchObject({ audit_id: expect.any(String), session_id: s.id });
      const audit = await h.knex('review_launches').where({ id: task.accepted.handoff.audit_id }).first();
      expect(audit.task_id).toBe(task.accepted.task_id);
      expect(task.accepted.handoff).toEqual({
        audit_id: audit.id,
        session_id: s.id,
        session_version: audit.session_version,
        launched_by: { id: manager.id, username: audit.launched_by_username },
        launched_at: audit.created_at.toISOString(),
        will_create: {
          env_id: envId,
          dataset_change: { dataset_id: fx.datasetId, dataset_name: expect.any(String), columns: expect.arrayContaining(['units']) },
          saved_query: {
            label: expect.stringMatching(/^Reviewed: /),
            database_id: expect.any(Number),
            schema: expect.toBeOneOf([expect.any(String), null]),
            catalog: expect.toBeOneOf([expect.any(String), null]),
          },
        },
      });
      expect(audit.launched_by_username).toContain('manager');
      const handoff = task.result.handoff;
      expect(handoff.session_version).toBe(task.accepted.handoff.session_version);
      expect(handoff).toMatchObject({
        session_id: s.id,
        launched_by: { id: manager.id, username: expect.stringContaining('manager') },
        dataset: { id: fx.datasetId, url: expect.stringContaining(`datasource_id=${fx.datasetId}`) },
        change: { id: item.change_id, undo: { method: 'POST', path: `/api/datasets/changes/${item.change_id}/undo` } },
        saved_query: { id: expect.any(Number), url: expect.stringContaining('/sqllab/?savedQueryId=') },
      });
      const written = await readDataset(client, fx.datasetId);
      expect(written.columns.find((c: any) => c.column_name === 'units')).toMatchObject({
        verbose_name: 'Units sold',
        description: 'Units on the order line',
      });
      const saved = await client.request<any>('GET', `/api/v1/saved_query/${handoff.saved_query.id}`);
      expect(saved.result.sql).toMatch(/"?product"? = 'widget'/);
      const session = (await as('GET', `${BASE}/${s.id}`)).body;
      expect(session.state).toBe('launched');
      expect(session.launch).toMatchObject({ change: { id: item.change_id } });

      const undo = await h.request('POST', `/api/datasets/changes/${item.change_id}/undo`, { token: h.adminToken, json: {} });
      expect(undo.status, undo.text).toBe(200);
      const restored = await readDataset(client, fx.datasetId);
      const units0 = before.columns.find((c: any) => c.column_name === 'units');
      expect(restored.columns.find((c: any) => c.column_name === 'units')).toMatchObject({
        verbose_name: units0.verbose_name,
        description: units0.description,
      });
    });
  });

  describe('Superset d (6.1.0, PostgreSQL metadata)', () => {
    it('launch writes into a dataset there, and undo restores it', async () => {
      const inst = superset('d');
      const client = await login(inst.baseUrl, inst.username, inst.password);
      try {
        const envId = await createEnvironment(h, {
          baseUrl: inst.baseUrl,
          username: inst.username,
          password: inst.password,
          timeoutSeconds: 60,
        });
        const fx = await createReviewFixture(client, { prefix: uniquePrefix('rvd'), dataDir: inst.dataDir, baseUrl: inst.baseUrl });
        const s = await start(manager.token, envId, fx.permalinkUrl);
        expect(s.state).toBe('ready');
        const region = s.fields.find((f: any) => f.name === 'region');
        const r = await call(manager.token)('PUT', `${BASE}/${s.id}/fields/${region.id}`, { version: s.version, label: 'Sales region' });
        expect(r.status, r.text).toBe(200);
        const task = await approvePreviewLaunch(manager.token, (await call(manager.token)('GET', `${BASE}/${s.id}`)).body);
        expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
        expect((await readDataset(client, fx.datasetId)).columns.find((c: any) => c.column_name === 'region').verbose_name).toBe(
          'Sales region',
        );
        const undo = await h.request('POST', `/api/datasets/changes/${task.result.items[0].change_id}/undo`, {
          token: h.adminToken,
          json: {},
        });
        expect(undo.status, undo.text).toBe(200);
        expect(
          (await readDataset(client, fx.datasetId)).columns.find((c: any) => c.column_name === 'region').verbose_name ?? null,
        ).toBeNull();
      } finally {
        client.close();
      }
    });
  });
});
