// Chart data against a real Superset 6.1.0 answering asynchronously (GLOBAL_ASYNC_QUERIES on, the
// polling transport, a Celery worker, Redis), started by this file: the verification's chart-data
// run and the dataset-review preview answer as they do against a synchronous Superset, a failing
// query fails with the job's own error, and the client really went through the 202 and the async
// event API. Skipped only locally, where redis-server cannot start (under CI=true that fails the run).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runQueryContext } from '../../domain/migration/chart-check/superset.ts';
import { runPreview } from '../../api/dataset-review/preview.ts';
import { SupersetClient } from '../../lib/superset/index.ts';
import { asyncQueryConfig, startCeleryWorker, startRedis, type Process } from '../support/superset/async-instance.ts';
import { startSuperset, type SupersetInstance } from '../support/superset/instance.ts';
import { available } from '../support/ci.ts';
import { createDataset, createSqliteDatabase, createTableChart, queryContextFromParams } from '../support/superset/fixtures.ts';

const enabled = inject('supersets') !== null; // the Superset venvs are there and real instances are wanted
let skipReason: string | undefined = enabled ? undefined : 'SWITCHYARD_TEST_SUPERSET=off';
let redis: Process | null = null;
let worker: Process | undefined;
let sup: SupersetInstance | undefined;
let client: SupersetClient;
const calls: Array<{ method: string; path: string; status: number }> = [];
let dataset: { id: number; database: number };
let chartParams: Record<string, unknown>;

beforeAll(async () => {
  if (skipReason) return;
  const dir = path.join(inject('runDir'), 'superset-async');
  // Locally a Redis that does not start skips this file; under CI=true it fails the run with Redis's own error.
  const started = await startRedis(path.join(dir, 'redis')).then(
    (r) => ({ redis: r, error: '' }),
    (err: unknown) => ({ redis: null, error: String(err) }),
  );
  if (
    !available('redis-server', started.redis !== null, `it did not start (${started.error}); .ci/run installs Debian's redis-server`) ||
    !started.redis
  ) {
    skipReason = 'redis-server is not installed or does not start here';
    return;
  }
  redis = started.redis;
  sup = await startSuperset({
    version: '6.1.0',
    dataDir: path.join(dir, 'superset'),
    fresh: true,
    useTemplate: true,
    workers: 1,
    threads: 4,
    featureFlags: { GLOBAL_ASYNC_QUERIES: true },
    extraConfig: asyncQueryConfig(dir, redis.port!),
    log: () => {},
  });
  worker = await startCeleryWorker(sup);
  client = new SupersetClient(
    { baseUrl: sup.baseUrl, username: sup.username, password: sup.password, timeoutSeconds: 60 },
    {
      logger: {
        debug: (o: any) => void (o.status !== undefined && calls.push({ method: o.method, path: o.path, status: o.status })),
        warn: () => {},
      },
      asyncQueries: { maxWaitMs: 120_000 },
    },
  );
  const db = await createSqliteDatabase(client, { name: 'async_warehouse', path: path.join(dir, 'warehouse.db') });
  const ds = await createDataset(client, { database: db.id, tableName: 'sales' });
  dataset = { id: ds.id, database: db.id };
  const chart = await createTableChart(client, { name: 'async rows', datasetId: ds.id, columns: ['ds', 'region', 'units'] });
  chartParams = chart.params;
}, 600_000);
afterAll(async () => {
  client?.close();
  await worker?.stop();
  await sup?.stop();
  await redis?.stop();
});

describe('chart data from a Superset answering asynchronously (GLOBAL_ASYNC_QUERIES, Celery, Redis)', () => {
  it('runs a chart the way verification does: through the 202 job and the async event API to its rows', async ({ skip }) => {
    if (skipReason) skip(skipReason);
    calls.length = 0;
    const answer = await runQueryContext(client, { ...queryContextFromParams(dataset.id, chartParams, 50), force: true } as never);
    expect(answer).toMatchObject({ ok: true });
    expect((answer as { rows: number }).rows).toBeGreaterThan(0);
    // Superset really answered asynchronously, and the client followed the job.
    expect(calls).toContainEqual({ method: 'POST', path: '/api/v1/chart/data', status: 202 });
    expect(calls.some((c) => c.path === '/api/v1/async_event/' && c.status === 200)).toBe(true);
    expect(calls.some((c) => /^\/api\/v1\/chart\/data\/[A-Za-z0-9_-]+$/.test(c.path) && c.status === 200)).toBe(true);
  });

  it("fails a chart whose query fails with the job's own error, never an internal one", async ({ skip }) => {
    if (skipReason) skip(skipReason);
    const qc = { datasource: { id: dataset.id, type: 'table' }, queries: [{ columns: ['no_such_column'], row_limit: 5 }], force: true };
    const err = await client.charts.data(qc as never).catch((e: unknown) => e);
    expect((err as Error).name, String(err)).toBe('SupersetQueryError');
    expect((err as { upstreamMessage: string }).upstreamMessage).toMatch(/no_such_column/i);
    const answer = await runQueryContext(client, qc as never);
    expect(answer).toMatchObject({ ok: false });
    expect((answer as { error: string }).error).toMatch(/no_such_column/i);
    expect((answer as { error: string }).error).not.toMatch(/Cannot read properties|TypeError/);
  });

  it('previews a dataset as the review does (its compile step asks for the SQL, which Superset answers at once)', async ({ skip }) => {
    if (skipReason) skip(skipReason);
    const preview = await runPreview(
      client,
      {
        id: dataset.id,
        table_name: 'sales',
        database_id: dataset.database,
        schema: null,
        catalog: null,
        sql: null,
        template_params: {},
        kind: 'physical',
        url: null,
      },
      ['region', 'units'],
      { filters: [{ col: 'region', op: '==', val: 'EMEA' }], template_params: {}, trace: [] },
    );
    expect(preview, JSON.stringify(preview)).toMatchObject({ status: 'succeeded', error: null });
    expect(preview.rows.length).toBeGreaterThan(0);
  });
});
