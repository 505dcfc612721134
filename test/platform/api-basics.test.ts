import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ worker: true });
});
afterAll(async () => h?.close());

describe('API skeleton', () => {
  it('answers health without authentication and carries a request id', async () => {
    const r = await h.request('GET', '/api/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps a sane caller-supplied request id and replaces an unsafe one', async () => {
    expect((await h.request('GET', '/api/health', { headers: { 'x-request-id': 'trace-123' } })).headers.get('x-request-id')).toBe(
      'trace-123',
    );
    expect(
      (await h.request('GET', '/api/health', { headers: { 'x-request-id': 'bad id with spaces' } })).headers.get('x-request-id'),
    ).not.toBe('bad id with spaces');
  });

  it('says how long the app spent on a request (Server-Timing), errors included', async () => {
    for (const r of [await h.request('GET', '/api/health'), await h.request('GET', '/api/tasks/no-such-task')]) {
      expect(r.headers.get('server-timing')).toMatch(/^app;dur=\d+\.\d$/);
    }
  });

  it('reports ready when the database, Temporal and a polling worker are there', async () => {
    const r = await h.request('GET', '/api/ready');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ready');
    expect(r.body.checks.worker.detail).toContain(h.config.TEMPORAL_TASK_QUEUE);
  });

  it('reports not ready (503) when no worker polls the task queue', async () => {
    await h.stopWorker();
    try {
      // Temporal forgets a poller about a minute after its last poll; a fresh queue has none.
      const other = await createHarness();
      try {
        const r = await other.request('GET', '/api/ready');
        expect(r.status).toBe(503);
        expect(r.body.checks.worker.ok).toBe(false);
        expect(r.body.checks.database.ok).toBe(true);
      } finally {
        await other.close();
      }
    } finally {
      await h.startWorker();
    }
  });

  it('serves an OpenAPI 3.1 document generated from the route table, and a docs page', async () => {
    const r = await h.request('GET', '/api/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const logs = r.body.paths['/api/tasks/{task_id}/logs'].get;
    const limit = logs.parameters.find((p: any) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 200 });
    expect(r.body.paths['/api/auth/login'].post.requestBody.content).toHaveProperty('application/x-www-form-urlencoded');
    const page = await h.request('GET', '/api/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/api/openapi.json');
    const asset = await h.request('GET', '/api/docs/assets/swagger-ui-bundle.js');
    expect(asset.status).toBe(200);
    expect((await h.request('GET', '/api/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });

  it('answers unknown routes and wrong methods with problem bodies', async () => {
    const r = await h.request('GET', '/api/nope');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body).toMatchObject({ status: 404, code: 'not_found', title: 'Not found' });
    const m = await h.request('DELETE', '/api/health');
    expect(m.status).toBe(405);
    expect(m.body.status).toBe(405);
  });

  it('rejects malformed JSON with a 400 problem body', async () => {
    const r = await h.request('POST', '/api/tasks/selfcheck', {
      token: h.adminToken,
      raw: '{"sleep_seconds":',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(await h.knex('tasks').count({ n: '*' })).toEqual([{ n: '0' }]);
  });
});
