import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildSource, client, superset, waitTask } from '../dashboard-migration/support.ts';
import { createEnvironment, uniquePrefix } from '../support/environments.ts';
import { startGatewayProxy, type GatewayProxy } from '../support/gateway-proxy.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createDashboard, createTableChart } from '../support/superset/fixtures.ts';

/**
 * The validator reads a dashboard of three charts or more from one export of it
 * (activities/validation/check.ts). When Superset refuses that export (here the real Superset 6.1.0
 * a behind a proxy answering every export 503, a fault a real one does not make on demand), the
 * check still runs: each chart is read alone, every chart is judged, and the task's log says why.
 */
const enabled = inject('supersets') !== null;
const P = uniquePrefix('vx');
const EXPORT = '/api/v1/dashboard/export/';
const CHART_DETAIL = /^\/api\/v1\/chart\/\d+$/;

let h: Harness;
let proxy: GatewayProxy;
let envId: string;
let dashboardId: number;

beforeAll(async () => {
  if (!enabled) return;
  const sa = superset('a');
  const a = await client('a');
  [h, proxy] = await Promise.all([
    createHarness({ worker: true }),
    startGatewayProxy({ target: sa.baseUrl, seed: 1, share: 1, statuses: [503], match: (_m, p) => p === EXPORT }),
  ]);
  const src = await buildSource(a, P, path.join(inject('runDir'), P), { dashboards: 1 });
  const third = await createTableChart(a, { name: `${P} third`, datasetId: src.sales.id, columns: ['ds', 'region'] });
  const charts = [...src.dashboards[0]!.chartIds.map((id) => ({ id })), { id: third.id }];
  dashboardId = (await createDashboard(a, { title: `${P} three charts`, slug: `${P}-three`, charts })).id;
  envId = await createEnvironment(h, { baseUrl: proxy.baseUrl, username: sa.username, password: sa.password, timeoutSeconds: 60 });
}, 300_000);

afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

describe.runIf(enabled)('validating a dashboard whose export Superset refuses', () => {
  it('reads each chart alone instead, judges all three, and logs why', async () => {
    const mark = proxy.mark();
    const r = await h.request('POST', `/api/environments/${envId}/validate`, {
      token: h.adminToken,
      json: { dashboard_ids: [dashboardId] },
    });
    expect(r.status, r.text).toBe(202);
    const task = await waitTask(h, r.body.task_id, 300_000);
    expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
    const items = await h.request('GET', `/api/tasks/${r.body.task_id}/items?page_size=10`, { token: h.adminToken });
    const item = items.body.items[0].item;
    expect(item).toMatchObject({ id: dashboardId, status: 'passed' });
    expect(item.charts.map((c: { verdict: string }) => c.verdict)).toEqual(['passed', 'passed', 'passed']);
    // The export was asked (and refused), then each of the three charts read in detail.
    expect(proxy.count(EXPORT, mark)).toBeGreaterThanOrEqual(1);
    expect(proxy.faults.every((f) => f.path === EXPORT && f.status === 503)).toBe(true);
    expect(proxy.count(CHART_DETAIL, mark)).toBe(3);
    const logs = await h.request('GET', `/api/tasks/${r.body.task_id}/logs?limit=200`, { token: h.adminToken });
    expect(logs.text).toContain(`dashboard ${dashboardId}: its export for the chart checks (each chart is read alone instead) failed`);
  }, 400_000);
});
