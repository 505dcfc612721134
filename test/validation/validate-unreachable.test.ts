import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironment } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * A validation never claims a failure it has not proven: an environment whose Superset does not
 * answer (a loopback port nothing listens on: a real refused connection, no fake) gets each
 * dashboard `failed` with what the transport said, the step and a next action, never `broken`,
 * and no verdict is recorded for it.
 */
let h: Harness;
let envId: string;

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  h = await createHarness({ worker: true });
  envId = await createEnvironment(h, {
    name: 'val-unreachable',
    baseUrl: `http://127.0.0.1:${await closedPort()}`,
    username: 'svc',
    password: 'svc-password-1',
  });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('validating an unreachable Superset', () => {
  it('fails each dashboard with the reason, never calls it broken, and records no verdict', { timeout: 180_000 }, async () => {
    const r = await h.request('POST', `/api/environments/${envId}/validate`, { token: h.adminToken, json: { dashboard_ids: [4, 2] } });
    expect(r.status, r.text).toBe(202);
    const task = await h.waitForTask(r.body.task_id, undefined, 150_000);
    expect(task.status).toBe('FAILED');
    expect(task.result.totals).toMatchObject({ requested: 2, failed: 2, broken: 0, newly_broken: 0 });
    const items = (await h.request('GET', `/api/tasks/${task.id}/items`, { token: h.adminToken })).body.items.map((x: any) => x.item);
    expect(items.map((i: any) => [i.id, i.status, i.outcome])).toEqual([
      [4, 'failed', 'failed'],
      [2, 'failed', 'failed'],
    ]);
    for (const i of items) {
      expect(i).toMatchObject({ step: 'check', charts: [], first_seen_broken_at: null });
      expect(i.error).toMatch(/refused|ECONNREFUSED|not answer|unavailable|reach/i);
      expect(i.next_actions.map((a: any) => a.action)).toContain('validate_again');
    }
    expect(await h.boot.context.stores.validationVerdicts.dashboards(envId)).toEqual([]);
  });
});
