// The assistant bound to a dataset review session, over HTTP with a real worker, PostgreSQL and
// Temporal: only the owner's session is read (someone else's is a 404 that shows nothing);
// imported filter values are masked in answers, stored messages and audit; a field's meaning,
// mapping approval and an answer wait for confirmation and are written at the session version
// shown; a session changed since answers 409 and nothing changes. A session seeded in the
// stores covers it without Superset; one started from a real permalink on Superset `a` repeats
// the main path end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_REGION, createReviewFixture } from '../dataset-review/support.ts';
import { createEnvironment, createUserWithRoles, superset, supersets, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { login } from '../support/superset/fixtures.ts';
import { seedReviewSession } from './support.ts';

let h: Harness;
let analyst: { id: string; token: string };
let other: { id: string; token: string };
let viewer: { id: string; token: string };

const SECRET_VALUES = /EMEA|Atlantis|widget|secret-manual/;

beforeAll(async () => {
  h = await createHarness({ worker: true });
  const p = uniquePrefix('asr');
  analyst = await createUserWithRoles(h, `${p}analyst`, ['Operator']);
  other = await createUserWithRoles(h, `${p}other`, ['Operator']);
  viewer = await createUserWithRoles(h, `${p}viewer`, ['Viewer']);
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const say = (token: string, text: string, sessionId: string, extra: Record<string, unknown> = {}) =>
  h.request('POST', '/api/assistant/messages', { token, json: { text, dataset_review_session_id: sessionId, ...extra } });
const confirm = (token: string, id: string) => h.request('POST', `/api/assistant/confirmations/${id}/confirm`, { token });
const session = async (token: string, id: string) => {
  const r = await h.request('GET', `/api/dataset-review/sessions/${id}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body;
};

/** A session as intake would leave it: two imported filters with values, one unresolved field, a manual mapping value. */
const seedSession = (ownerId: string, ownerName: string) => seedReviewSession(h.knex, ownerId, ownerName);

describe('a bound message', () => {
  it("reads only the caller's own session: someone else's is a 404 that shows nothing", async () => {
    const id = await seedSession(analyst.id, 'analyst');
    const mine = await say(analyst.token, 'покажи сессию', id);
    expect(mine.status, mine.text).toBe(200);
    for (const text of ['покажи сессию', 'поле region означает регион продаж', 'help']) {
      const r = await say(other.token, text, id);
      expect(r.status, r.text).toBe(404);
      expect(r.body.code).toBe('not_found');
      expect(r.text).not.toMatch(/Orders review|orders_view|region/);
    }
    expect((await say(analyst.token, 'покажи сессию', '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await say(analyst.token, 'покажи сессию', 'drs-1')).status).toBe(404);
    // Nothing was stored for the refused messages.
    const convs = await h.request('GET', '/api/assistant/conversations', { token: other.token });
    expect(convs.body.total).toBe(0);
  });

  it('shows the session with the open question and unresolved fields, values masked in the answer, the history and the audit', async () => {
    const id = await seedSession(analyst.id, 'analyst');
    const r = await say(analyst.token, 'покажи сессию', id);
    expect(r.body).toMatchObject({
      state: 'executed',
      intent: { domain: 'dataset_review', operation: 'show', requires_confirmation: false },
    });
    expect(r.body.text).toMatch(/Orders review/);
    expect(r.body.text).toMatch(/Текущий вопрос: What does column 'region' mean\?/);
    expect(r.body.text).toMatch(/Нерешённые поля \(2\): region, units/);
    const bound = r.body.data.dataset_review_session;
    expect(bound).toMatchObject({ id, version: 1, state: 'ready', unresolved_fields: ['region', 'units'] });
    expect(bound.open_question).toMatchObject({ key: expect.stringMatching(/^field_meaning:/), kind: 'field_meaning' });
    expect(bound.imported_filters.map((f: any) => f.raw_value)).toEqual(['***', '***']);
    expect(bound.imported_filters[0].normalized).toEqual([{ col: 'region', op: 'IN', val: '***' }]);
    expect(bound.mappings.find((m: any) => m.filter_id === 'F-product').value).toBe('***');
    expect(r.text).not.toMatch(SECRET_VALUES);

    const en = await say(analyst.token, 'show the session', id, { conversation_id: r.body.conversation_id });
    expect(en.body.text).toMatch(/Current question: What does column 'region' mean\?/);
    const history = await h.request('GET', `/api/assistant/conversations/${r.body.conversation_id}/messages`, { token: analyst.token });
    expect(history.body.items).toHaveLength(4);
    expect(history.text).not.toMatch(SECRET_VALUES);
    const audit = await h.request('GET', '/api/assistant/audit?page_size=100', { token: analyst.token });
    expect(audit.body.items.some((a: any) => a.domain === 'dataset_review' && a.operation === 'show')).toBe(true);
    expect(audit.text).not.toMatch(SECRET_VALUES);
  });

  it('asks for a session when a review command is not bound to one, and denies a viewer a write', async () => {
    const r = await h.request('POST', '/api/assistant/messages', { token: analyst.token, json: { text: 'approve mappings' } });
    expect(r.body).toMatchObject({ state: 'needs_clarification', data: { missing: ['dataset_review_session_id'] } });
    const id = await seedSession(viewer.id, 'viewer');
    const shown = await say(viewer.token, 'show the session', id);
    expect(shown.body.state).toBe('executed');
    const denied = await say(viewer.token, 'approve mappings', id);
    expect(denied.body).toMatchObject({ state: 'denied', data: { permission: 'dataset_review:WRITE' } });
  });
});

describe('writes through confirmations at the session version', () => {
  it('a field change is proposed, confirmed and written with the version; confirming again answers the same', async () => {
    const id = await seedSession(analyst.id, 'analyst');
    const r = await say(analyst.token, 'поле region означает регион продаж', id);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      state: 'awaiting_confirmation',
      intent: {
        domain: 'dataset_review',
        operation: 'set_field',
        entities: { field: 'region', label: 'регион продаж' },
        requires_confirmation: true,
      },
    });
    expect(r.body.confirmation.summary).toMatch(/полю «region».*«регион продаж»/);
    expect(r.body.data.entities).toMatchObject({ session_version: 1, field: { name: 'region' } });
    // Nothing changed yet.
    expect((await session(analyst.token, id)).version).toBe(1);

    const c = await confirm(analyst.token, r.body.confirmation.id);
    expect(c.status, c.text).toBe(200);
    expect(c.body).toMatchObject({ status: 'confirmed', task_id: null, data: { session_id: id, op: 'set_field', version: 2 } });
    expect(c.body.text).toMatch(/Версия сессии теперь 2/);
    const after = await session(analyst.token, id);
    expect(after.version).toBe(2);
    expect(after.fields.find((f: any) => f.name === 'region')).toMatchObject({
      label: 'регион продаж',
      provenance: 'manual',
      status: 'manual',
      locked: true,
    });
    const again = await confirm(analyst.token, r.body.confirmation.id);
    expect(again.body).toMatchObject({ status: 'confirmed', data: { version: 2 } });
    expect((await session(analyst.token, id)).version).toBe(2);
    // Another user cannot confirm it.
    expect((await confirm(other.token, r.body.confirmation.id)).status).toBe(403);
  });

  it('confirming after the session changed answers 409 version_conflict with current_version, and changes nothing', async () => {
    const id = await seedSession(analyst.id, 'analyst');
    const r = await say(analyst.token, 'set field units to Units sold', id);
    expect(r.body.state).toBe('awaiting_confirmation');
    // The session moves on meanwhile (a title edit through the review API).
    const patched = await h.request('PATCH', `/api/dataset-review/sessions/${id}`, {
      token: analyst.token,
      json: { version: 1, title: 'Renamed' },
    });
    expect(patched.status, patched.text).toBe(200);
    const before = await session(analyst.token, id);
    const c = await confirm(analyst.token, r.body.confirmation.id);
    expect(c.status, c.text).toBe(409);
    expect(c.body).toMatchObject({ code: 'version_conflict', current_version: 2 });
    const after = await session(analyst.token, id);
    expect(after.version).toBe(2);
    expect(after.fields).toEqual(before.fields);
    expect(after.fields.find((f: any) => f.name === 'units')).toMatchObject({ label: null, status: 'unresolved' });
    // A fresh command at the current version goes through.
    const fresh = await say(analyst.token, 'set field units to Units sold', id);
    expect(fresh.body.data.entities.session_version).toBe(2);
    expect((await confirm(analyst.token, fresh.body.confirmation.id)).body.data.version).toBe(3);
    expect((await session(analyst.token, id)).fields.find((f: any) => f.name === 'units').label).toBe('Units sold');
  });

  it('approves the mappings through a confirmation', async () => {
    const id = await seedSession(analyst.id, 'analyst');
    expect((await session(analyst.token, id)).mappings.every((m: any) => !m.approved)).toBe(true);
    const r = await say(analyst.token, 'утверди маппинги', id);
    expect(r.body).toMatchObject({ state: 'awaiting_confirmation', intent: { operation: 'approve_mappings' } });
    expect(r.body.confirmation.summary).toMatch(/Region → region/);
    expect(r.text).not.toMatch(SECRET_VALUES);
    const c = await confirm(analyst.token, r.body.confirmation.id);
    expect(c.status, c.text).toBe(200);
    const after = await session(analyst.token, id);
    expect(after.version).toBe(2);
    expect(after.mappings.every((m: any) => m.approved)).toBe(true);
  });

  it('answers the current question: a meaning for field_meaning, "skip" for the next', async () => {
    const id = await seedSession(analyst.id, 'analyst');
    const r = await say(analyst.token, 'ответ: регион продаж', id);
    expect(r.body).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { operation: 'answer', entities: { answer: 'регион продаж' } },
    });
    expect((await confirm(analyst.token, r.body.confirmation.id)).status).toBe(200);
    let s = await session(analyst.token, id);
    expect(s.fields.find((f: any) => f.name === 'region')).toMatchObject({ label: 'регион продаж', provenance: 'manual', locked: true });
    expect(s.clarification.current_question).toMatch(/^field_meaning:/);
    const skip = await say(analyst.token, 'answer: skip', id);
    expect(skip.body.data.entities).toMatchObject({ option: 'skip' });
    expect((await confirm(analyst.token, skip.body.confirmation.id)).status).toBe(200);
    s = await session(analyst.token, id);
    expect(s.clarification).toMatchObject({ blocking: false, current_question: null });
    const none = await say(analyst.token, 'ответ 1', id);
    expect(none.body).toMatchObject({ state: 'needs_clarification', data: { not_found: 'question' } });
  });
});

const S = supersets();
describe.runIf(S)('bound to a session started from a real permalink (Superset a)', () => {
  it('shows it masked, sets a meaning and approves the mappings through confirmations', async () => {
    const inst = superset('a');
    const client = await login(inst.baseUrl, inst.username, inst.password);
    try {
      const envId = await createEnvironment(h, {
        baseUrl: inst.baseUrl,
        username: inst.username,
        password: inst.password,
        timeoutSeconds: 60,
      });
      const fx = await createReviewFixture(client, { prefix: uniquePrefix('asra'), dataDir: inst.dataDir, baseUrl: inst.baseUrl });
      const started = await h.request('POST', '/api/dataset-review/sessions', {
        token: analyst.token,
        json: { env_id: envId, link: fx.permalinkUrl },
      });
      expect(started.status, started.text).toBe(201);
      const id = started.body.id;
      expect(JSON.stringify(started.body.imported_filters)).toMatch(/EMEA/);

      expect((await say(other.token, 'show the session', id)).status).toBe(404);
      const shown = await say(analyst.token, 'show the session', id);
      expect(shown.body.state).toBe('executed');
      const filters = shown.body.data.dataset_review_session.imported_filters;
      expect(filters.find((f: any) => f.id === FILTER_REGION)).toMatchObject({
        raw_value: '***',
        normalized: [{ col: 'region', op: 'IN', val: '***' }],
      });
      expect(shown.text).not.toMatch(/EMEA|widget/);

      const set = await say(analyst.token, 'поле units означает «Продано, шт.»', id);
      expect(set.body.state, set.text).toBe('awaiting_confirmation');
      expect((await confirm(analyst.token, set.body.confirmation.id)).status).toBe(200);
      const approve = await say(analyst.token, 'approve the mappings', id);
      expect((await confirm(analyst.token, approve.body.confirmation.id)).status).toBe(200);
      const s = await session(analyst.token, id);
      expect(s.version).toBe(started.body.version + 2);
      expect(s.fields.find((f: any) => f.name === 'units')).toMatchObject({ label: 'Продано, шт.', provenance: 'manual', locked: true });
      expect(s.mappings.every((m: any) => m.approved)).toBe(true);
    } finally {
      client.close();
    }
  }, 180_000);
});
