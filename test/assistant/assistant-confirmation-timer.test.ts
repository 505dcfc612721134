// One decider of a confirmation's state: the row. The confirmation workflow is only its timer:
// when it fires it asks the row and ends with the row's state, whatever its own clock says. The
// timer's view is forced here by starting the workflow with an expiry long past (the epoch), so
// nothing depends on the time the test runs. The environment is the real Superset 6.1.0 a.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ASSISTANT_CONFIRMATION_WORKFLOW, confirmationWorkflowId } from '../../contracts/assistant.ts';
import { client, registerEnvironment } from '../dashboard-migration/support.ts';
import { uniquePrefix } from '../support/environments.ts';
import { createHarness, waitFor, type Harness } from '../support/harness.ts';
import { createDashboard } from '../support/superset/fixtures.ts';

const real = inject('supersets') !== null;
const P = uniquePrefix('act');
let h: Harness;
const LONG_PAST = new Date(0).toISOString();

beforeAll(async () => {
  if (!real) return;
  h = await createHarness({ worker: true });
  await createDashboard(await client('a'), { title: `${P} Ops board`, slug: `${P}-ops-board` });
  await registerEnvironment(h, 'a', 'dev');
}, 180_000);
afterAll(async () => {
  await h?.close();
});

/** A confirmation asked through the assistant (the row pending, ten minutes to go). */
async function ask(): Promise<string> {
  const r = await h.request('POST', '/api/assistant/messages', {
    token: h.adminToken,
    json: { text: `сделай бэкап дашборда «${P} Ops board» в dev` },
  });
  expect(r.body.state, r.text).toBe('awaiting_confirmation');
  return r.body.confirmation.id;
}

/** Its timer replaced by one whose time is long up (the workflow's clock says it is over). */
async function timerUp(id: string) {
  const { workflow } = h.boot.context.temporal;
  await workflow.getHandle(confirmationWorkflowId(id)).terminate('replaced by the test');
  return workflow.start(ASSISTANT_CONFIRMATION_WORKFLOW, {
    workflowId: confirmationWorkflowId(id),
    taskQueue: h.config.TEMPORAL_TASK_QUEUE,
    args: [{ confirmationId: id, expiresAt: LONG_PAST }],
  });
}

const rowOf = (id: string) => h.knex('assistant_confirmations').where({ id }).first();
const expiredAudits = async (id: string) => (await h.knex('assistant_audit').where({ confirmation_id: id, decision: 'expired' })).length;

describe.runIf(real)('the confirmation row decides, the workflow is its timer', () => {
  it('a timer that fires after the row was cancelled ends as cancelled, and expires nothing', async () => {
    const id = await ask();
    // Decided in the row only: the running timer is not told.
    expect(await h.boot.context.stores.assistant.confirmations.decide(id, 'cancelled')).toBeTruthy();
    const handle = await timerUp(id);
    expect(await handle.result()).toEqual({ state: 'cancelled' });
    expect((await rowOf(id)).status).toBe('cancelled');
    expect(await expiredAudits(id)).toBe(0);
  });

  it('a timer whose time is up while the row is still pending by the database clock waits; the owner can still confirm', async () => {
    const id = await ask();
    const handle = await timerUp(id);
    // The timer fired and asked the row...
    await waitFor(
      async () => (await handle.fetchHistory()).events?.some((e) => e.activityTaskCompletedEventAttributes),
      30_000,
      'the timer asked the row',
    );
    // ...which is still pending: the workflow does not call it expired.
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await rowOf(id)).status).toBe('pending');
    expect(await expiredAudits(id)).toBe(0);
    const c = await h.request('POST', `/api/assistant/confirmations/${id}/confirm`, { token: h.adminToken });
    expect(c.status, c.text).toBe(200);
    expect(c.body.task_id).toMatch(/^backup-/);
    expect(await handle.result()).toEqual({ state: 'confirmed' });
  });

  it('a timer that fires on a pending row past its time expires it, audited once', async () => {
    const id = await ask();
    // The row's time is up by the database's clock (as if its ten minutes had passed).
    await h
      .knex('assistant_confirmations')
      .where({ id })
      .update({ expires_at: new Date(0) });
    const handle = await timerUp(id);
    expect(await handle.result()).toEqual({ state: 'expired' });
    expect((await rowOf(id)).status).toBe('expired');
    expect(await expiredAudits(id)).toBe(1);
    const c = await h.request('POST', `/api/assistant/confirmations/${id}/confirm`, { token: h.adminToken });
    expect(c.body.code).toBe('confirmation_expired');
  });
});
