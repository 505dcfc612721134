// The assistant confirmation's timer (workflows/assistant-confirmation.ts) on Temporal's
// time-skipping test server, its one activity mocked: a confirmation nobody answers for 24 hours is
// settled at its expiry (in milliseconds of the test's time), a row whose clock is behind is asked
// again at its own expiry, and one the API says is decided is settled at once. The end-to-end
// counterpart (a real row, PostgreSQL's clock, a short expiry) is test/assistant/assistant-confirmation-timer.test.ts.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import type { AssistantConfirmationResult, ConfirmationState } from '../../contracts/assistant.ts';
import { confirmationDecidedSignal } from '../../contracts/workflow-messages.ts';
import type { assistantConfirmationWorkflow } from '../../workflows/assistant-confirmation.ts';
import { hasTestServer, recorded, onTimeSkipping, testWorker, type ActivityCall } from '../support/time-skipping.ts';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

onTimeSkipping((e, b) => {
  env = e;
  bundle = b;
});

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Runs one confirmation's timer, expiring a day from now on the server's clock, with the row's
 * answers given in turn; `decide` (when set) tells it the row was decided before its result is awaited.
 */
async function runTimer(rows: Array<{ state: ConfirmationState; expiresInMs: number }>, opts: { decide?: boolean } = {}) {
  const calls: ActivityCall[] = [];
  const taskQueue = `assistant-confirmation-${randomUUID()}`;
  const startedMs = await env.currentTimeMs();
  const expiresAt = (inMs: number) => new Date(startedMs + inMs).toISOString();
  const answers = [...rows];
  const worker = await testWorker(
    env,
    taskQueue,
    bundle,
    recorded(
      {
        settleAssistantConfirmation: async () => {
          const row = answers.shift()!;
          return { state: row.state, expiresAt: expiresAt(row.expiresInMs) };
        },
      },
      calls,
    ),
  );
  const result = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof assistantConfirmationWorkflow>('assistantConfirmationWorkflow', {
      args: [{ confirmationId: 'confirmation-1', expiresAt: expiresAt(DAY_MS) }],
      taskQueue,
      workflowId: `assistant-confirmation-${randomUUID()}`,
    });
    // Before the result is awaited the test server does not skip time: the signal lands while the timer is a day off.
    if (opts.decide) await handle.signal(confirmationDecidedSignal);
    return handle.result();
  });
  return { result, calls, settledAfter: calls.map((c) => c.scheduledMs - startedMs) };
}

describe.runIf(hasTestServer)('the assistant confirmation timer (time-skipping test server)', () => {
  it('settles a confirmation nobody answered at its expiry, a day later', async () => {
    const { result, calls, settledAfter } = await runTimer([{ state: 'expired', expiresInMs: DAY_MS }]);

    expect(result).toEqual<AssistantConfirmationResult>({ state: 'expired' });
    expect(calls.map((c) => [c.activity, c.input])).toEqual([['settleAssistantConfirmation', { confirmationId: 'confirmation-1' }]]);
    expect(settledAfter[0]).toBeGreaterThanOrEqual(DAY_MS);
    expect(settledAfter[0]).toBeLessThan(DAY_MS + HOUR_MS);
  });

  it('asks again at the row’s own expiry when the row, by its clock, is still pending', async () => {
    const { result, calls, settledAfter } = await runTimer([
      { state: 'pending', expiresInMs: DAY_MS + HOUR_MS },
      { state: 'expired', expiresInMs: DAY_MS + HOUR_MS },
    ]);

    expect(result).toEqual<AssistantConfirmationResult>({ state: 'expired' });
    expect(calls.map((c) => c.activity)).toEqual(['settleAssistantConfirmation', 'settleAssistantConfirmation']);
    expect(settledAfter[0]).toBeGreaterThanOrEqual(DAY_MS);
    expect(settledAfter[0]).toBeLessThan(DAY_MS + HOUR_MS);
    expect(settledAfter[1]).toBeGreaterThanOrEqual(DAY_MS + HOUR_MS);
    expect(settledAfter[1]).toBeLessThan(DAY_MS + 2 * HOUR_MS);
  });

  it('settles at once when told the row was decided, without waiting for the expiry', async () => {
    const { result, settledAfter } = await runTimer([{ state: 'confirmed', expiresInMs: DAY_MS }], { decide: true });

    expect(result).toEqual<AssistantConfirmationResult>({ state: 'confirmed' });
    expect(settledAfter).toHaveLength(1);
    expect(settledAfter[0]).toBeLessThan(HOUR_MS);
  });
});
