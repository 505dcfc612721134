// A dataset review's preview against real Superset `a`: what a person types for a template variable
// reaches the SQL only bound or quoted. A dataset whose template pastes a value
// (`url_param(..., escape_result=False)`) previews a plain value, but a value that would change the
// query is refused before anything runs (the old preview ran it and returned every row); a typed
// `{{ … }}`, which SQL Lab's own Jinja pass would have rendered, is refused; url_param's own quoting
// keeps a quote inside a literal. And the preview's rows are shown only to someone holding
// datasets:READ: without it the preview is a 403 and a stored one is read without its rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment, createUserWithRoles, superset, supersets, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { login, type SupersetClient } from '../support/superset/fixtures.ts';
import { createReviewFixture, FILTER_PRODUCT, type ReviewFixture } from './support.ts';

const S = supersets();
if (!S) console.warn('test/dataset-review/preview-safety.test.ts skipped: no real Superset (SWITCHYARD_TEST_SUPERSET=off)');

const BASE = '/api/dataset-review/sessions';

/** The fixture's dataset SQL with its url_param pasted unquoted-by-Superset, as a careless template does. */
const PASTING_SQL = (table: string) =>
  [
    `SELECT region, product, units FROM ${table} WHERE 1 = 1`,
    "{% if url_param('product') %} AND product = '{{ url_param('product', escape_result=False) }}'{% endif %}",
  ].join('\n');

describe.runIf(S)('dataset review previews: typed values are bound or quoted, rows only for datasets:READ', () => {
  let h: Harness;
  let client: SupersetClient;
  let envId: string;
  let fx: ReviewFixture;
  let pasting: ReviewFixture;
  let analyst: { id: string; token: string };
  let reviewer: { id: string; token: string };
  let reviewerRole: string;

  beforeAll(async () => {
    h = await createHarness({ worker: true });
    const inst = superset('a');
    client = await login(inst.baseUrl, inst.username, inst.password);
    envId = await createEnvironment(h, { baseUrl: inst.baseUrl, username: inst.username, password: inst.password, timeoutSeconds: 60 });
    fx = await createReviewFixture(client, { prefix: uniquePrefix('pvq'), dataDir: inst.dataDir, baseUrl: inst.baseUrl });
    pasting = await createReviewFixture(client, { prefix: uniquePrefix('pvp'), dataDir: inst.dataDir, baseUrl: inst.baseUrl });
    await client.request('PUT', `/api/v1/dataset/${pasting.datasetId}`, { json: { sql: PASTING_SQL(pasting.tableName) } });
    const p = uniquePrefix('pv');
    analyst = await createUserWithRoles(h, `${p}analyst`, ['Operator']);
    // Runs reviews, but may not read datasets.
    reviewerRole = `${p}Reviewer`;
    const role = await h.request('POST', '/api/admin/roles', {
      token: h.adminToken,
      json: { name: reviewerRole, permissions: ['dataset_review:READ', 'dataset_review:WRITE'] },
    });
    expect(role.status, role.text).toBe(201);
    reviewer = await createUserWithRoles(h, `${p}reviewer`, [reviewerRole]);
  });
  afterAll(async () => {
    client?.close();
    await h?.close();
  });

  const as = (token: string) => (method: string, path: string, json?: unknown) =>
    h.request(method, path, { token, ...(json === undefined ? {} : { json }) });

  /** A session on the fixture's permalink with the product filter's value set by hand; the preview. */
  async function previewWithProduct(token: string, fixture: ReviewFixture, value: unknown) {
    const call = as(token);
    const started = await call('POST', BASE, { env_id: envId, link: fixture.permalinkUrl });
    expect(started.status, started.text).toBe(201);
    const s = started.body;
    const product = s.mappings.find((m: any) => m.filter_id === FILTER_PRODUCT);
    const patched = await call('PATCH', `${BASE}/${s.id}/mappings/${product.id}`, { version: s.version, value });
    expect(patched.status, patched.text).toBe(200);
    const r = await call('POST', `${BASE}/${s.id}/preview`, { version: patched.body.version });
    return { session: s, r };
  }

  it('a template that pastes a value: a plain value previews, one that changes the query is refused and nothing runs', async () => {
    const plain = await previewWithProduct(analyst.token, pasting, 'widget');
    expect(plain.r.status, plain.r.text).toBe(200);
    expect(plain.r.body.preview, JSON.stringify(plain.r.body.preview)).toMatchObject({ status: 'succeeded', row_count: 4 });

    const injected = await previewWithProduct(analyst.token, pasting, "x' OR '1'='1");
    expect(injected.r.status, injected.r.text).toBe(200);
    expect(injected.r.body.preview, JSON.stringify(injected.r.body.preview)).toMatchObject({
      status: 'failed',
      step: 'check',
      rows: [],
      row_count: null,
      compiled_sql: null,
    });
    expect(injected.r.body.preview.error).toMatch(/changes the query itself/);
  });

  it("url_param's own quoting keeps a quote inside the literal; a typed {{ … }} is refused before SQL Lab's Jinja pass could render it", async () => {
    const quoted = await previewWithProduct(analyst.token, fx, "x' OR '1'='1");
    expect(quoted.r.body.preview, JSON.stringify(quoted.r.body.preview)).toMatchObject({ status: 'succeeded', row_count: 0 });

    const templated = await previewWithProduct(analyst.token, fx, '{{ 7 * 7 }}');
    expect(templated.r.body.preview, JSON.stringify(templated.r.body.preview)).toMatchObject({ status: 'failed', step: 'check', rows: [] });
    expect(templated.r.body.preview.error).toMatch(/Jinja/);
  });

  it("shows a preview's rows only to someone holding datasets:READ", async () => {
    const denied = await previewWithProduct(reviewer.token, fx, 'widget');
    expect(denied.r.status, denied.r.text).toBe(403);
    expect(denied.r.body.detail).toMatch(/datasets:READ/);

    // A stored preview read back by its owner without datasets:READ: everything but the rows.
    const mine = await previewWithProduct(analyst.token, fx, 'widget');
    expect(mine.r.body.preview.rows.length).toBeGreaterThan(0);
    const setRoles = async (roles: string[]) => {
      const r = await h.request('PUT', `/api/admin/users/${analyst.id}`, { token: h.adminToken, json: { roles } });
      expect(r.status, r.text).toBe(200);
    };
    await setRoles([reviewerRole]);
    try {
      const read = await h.request('GET', `${BASE}/${mine.session.id}`, { token: analyst.token });
      expect(read.status, read.text).toBe(200);
      expect(read.body.preview).toMatchObject({ status: 'succeeded', row_count: 4, rows: [], rows_hidden: true });
    } finally {
      await setRoles(['Operator']);
    }
    const back = await h.request('GET', `${BASE}/${mine.session.id}`, { token: analyst.token });
    expect(back.body.preview.rows.length).toBeGreaterThan(0);
  });
});
