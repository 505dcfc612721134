// Two API processes on one database (as two replicas behind a load balancer): a question the
// assistant asks on one is answered on the other. The command waiting for its missing part is
// recalled from the conversation's rows in PostgreSQL, not from one process's memory. The
// environments are the real Superset 6.1.0 a (dev) and b (prod).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, registerEnvironment } from '../dashboard-migration/support.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDashboard } from '../support/superset/fixtures.ts';

const real = inject('supersets') !== null;
const P = uniquePrefix('arp');
const SALES = `${P} Sales Overview`;
const OPS = `${P} Ops board`;
let a: Harness;
let b: Harness;
let operator: { id: string; token: string };

beforeAll(async () => {
  if (!real) return;
  a = await createHarness();
  b = await createHarness({ sharing: a });
  const dev = await client('a');
  await createDashboard(dev, { title: SALES, slug: `${P}-sales-overview` });
  await createDashboard(dev, { title: OPS, slug: `${P}-ops-board` });
  await registerEnvironment(a, 'a', 'dev');
  await registerEnvironment(a, 'b', 'prod');
  operator = await createUserWithRoles(a, 'replica-operator', ['Operator']);
}, 180_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const say = (h: Harness, text: string, conversation_id?: string) =>
  h.request('POST', '/api/assistant/messages', { token: operator.token, json: { text, ...(conversation_id ? { conversation_id } : {}) } });

describe.runIf(real)('the assistant on two API processes', () => {
  it('asks on one and takes the answer on the other', async () => {
    expect(a.baseUrl).not.toBe(b.baseUrl);
    const asked = await say(a, `перенеси дашборд «${SALES}»`);
    expect(asked.body, asked.text).toMatchObject({
      state: 'needs_clarification',
      intent: { domain: 'dashboards', operation: 'migrate' },
      data: { missing: ['source_environment', 'target_environment'] },
    });
    const answered = await say(b, 'из dev в prod', asked.body.conversation_id);
    expect(answered.body, answered.text).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { operation: 'migrate', entities: { source_environment: 'dev', target_environment: 'prod', dashboards: [SALES] } },
    });
    expect(answered.body.confirmation.summary).toMatch(new RegExp(`^Перенести 1 дашборд \\(#\\d+ «${SALES}»\\) из dev в prod`));
    // And the confirmation asked on B is confirmed on A.
    const confirmed = await a.request('POST', `/api/assistant/confirmations/${answered.body.confirmation.id}/confirm`, {
      token: operator.token,
    });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.task_id).toMatch(/^migration-/);
  });

  it('completes a command over several replies, each on the other process', async () => {
    const asked = await say(b, `migrate dashboard "${OPS}"`);
    expect(asked.body).toMatchObject({ state: 'needs_clarification', data: { missing: ['source_environment', 'target_environment'] } });
    const half = await say(a, 'from dev', asked.body.conversation_id);
    expect(half.body).toMatchObject({
      state: 'needs_clarification',
      intent: { operation: 'migrate', entities: { source_environment: 'dev' } },
      data: { missing: ['target_environment'] },
    });
    const right = await say(b, 'to prod', asked.body.conversation_id);
    expect(right.body, right.text).toMatchObject({
      state: 'awaiting_confirmation',
      intent: { operation: 'migrate', entities: { source_environment: 'dev', target_environment: 'prod', dashboards: [OPS] } },
    });
    // Answered: nothing is waiting any more.
    const again = await say(a, 'in prod', right.body.conversation_id);
    expect(again.body.intent.operation).toBe('unknown');
  });

  it('forgets a waiting command after ten minutes by the database clock', async () => {
    const asked = await say(a, 'покажи дашборды');
    expect(asked.body).toMatchObject({ state: 'needs_clarification', data: { missing: ['environment'] } });
    // As if the question had been asked eleven minutes ago.
    await a
      .knex('assistant_messages')
      .where({ conversation_id: asked.body.conversation_id, role: 'user' })
      .update({
        created_at: a.knex.raw("now() - interval '11 minutes'"),
      });
    const late = await say(b, 'в dev', asked.body.conversation_id);
    expect(late.body.intent.operation).toBe('unknown');
  });

  it('forgets the waiting command when the conversation is archived on the other process', async () => {
    const asked = await say(a, 'покажи дашборды');
    expect(asked.body).toMatchObject({ state: 'needs_clarification', data: { missing: ['environment'] } });
    const del = await b.request('DELETE', `/api/assistant/conversations/${asked.body.conversation_id}`, { token: operator.token });
    expect(del.body.deleted).toBe('archived');
    const after = await say(a, 'в dev', asked.body.conversation_id);
    expect(after.body.intent.operation).toBe('unknown');
  });
});
