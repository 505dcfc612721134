// Switchyard reaches Temporal over mTLS with an API key: the dev server has no TLS, so a
// TLS-terminating gRPC proxy (test/support/temporal-tls-proxy.ts) stands in front of it, requires a
// client certificate from the test CA and answers UNAUTHENTICATED without the API key.
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';
import { temporalConnectionOptions } from '../../lib/temporal-connection.ts';
import { capturedLogs, createHarness, type Harness } from '../support/harness.ts';
import { startTemporalTlsProxy, type TemporalTlsProxy } from '../support/temporal-tls-proxy.ts';
import { createTestPki, type TestPki } from '../support/test-pki.ts';

const API_KEY = 'temporal-api-key-for-tests-7f3a9c';

let pki: TestPki;
let proxy: TemporalTlsProxy;
beforeAll(async () => {
  pki = createTestPki();
  proxy = await startTemporalTlsProxy({
    upstream: inject('temporalAddress'),
    key: fs.readFileSync(pki.server.key),
    cert: fs.readFileSync(pki.server.cert),
    clientCa: fs.readFileSync(pki.ca.cert),
    apiKey: API_KEY,
  });
});
afterAll(async () => {
  await proxy?.close();
  pki?.remove();
});

const tlsEnv = () => ({
  TEMPORAL_ADDRESS: proxy.address,
  TEMPORAL_TLS_CERT: pki.client.cert,
  TEMPORAL_TLS_KEY: pki.client.key,
  TEMPORAL_TLS_CA: pki.ca.cert,
  // The address is an IP; the name checked against the server certificate is another SAN of it.
  TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
  TEMPORAL_API_KEY: API_KEY,
});

describe('Temporal over mTLS with an API key', () => {
  let h: Harness;
  afterAll(async () => h?.close());

  it('API client and worker connect through the TLS proxy and run a selfcheck end to end', async () => {
    h = await createHarness({ worker: true, env: tlsEnv() });
    const started = await h.request('POST', '/api/tasks/selfcheck', { json: {}, token: h.adminToken });
    expect(started.status, started.text).toBe(202);
    const task = await h.waitForTask(started.body.task_id);
    expect(task.status).toBe('SUCCEEDED');
    expect(task.result.steps.map((s: any) => s.step)).toEqual(['database', 'temporal', 'worker']);

    const ready = await h.request('GET', '/api/ready');
    expect(ready.status, ready.text).toBe(200);
    expect(ready.body.checks.temporal.ok).toBe(true);
    expect(ready.body.checks.worker.ok).toBe(true);

    // Every kind of caller went through the proxy: search attributes at start, task start,
    // the worker's polls, the readiness check; each with the client certificate and the key.
    const paths = new Set(proxy.calls.map((c) => c.path.split('/').at(-1)));
    for (const method of [
      'ListSearchAttributes',
      'StartWorkflowExecution',
      'PollWorkflowTaskQueue',
      'PollActivityTaskQueue',
      'DescribeTaskQueue',
    ]) {
      expect(paths, method).toContain(method);
    }
    expect(proxy.calls.every((c) => c.client === 'switchyard-client' && c.authorization === `Bearer ${API_KEY}`)).toBe(true);
    // Both SDK transports were used: the API's grpc-js client and the worker's native (Rust) one.
    const agents = new Set(proxy.calls.map((c) => (c.userAgent?.startsWith('grpc-node-js') ? 'node' : 'native')));
    expect([...agents].sort()).toEqual(['native', 'node']);

    // The key material never reaches a log line.
    const logs = capturedLogs.join('\n');
    expect(logs).toContain('connected to Temporal');
    expect(logs).not.toContain(API_KEY);
    expect(logs).not.toContain(fs.readFileSync(pki.client.key, 'utf8').split('\n')[1]);
  });

  it('refuses a client without a client certificate, with a foreign one, or in plain gRPC', async () => {
    const refusedBefore = proxy.refusedHandshakes;
    const base = { address: proxy.address, apiKey: API_KEY, connectTimeout: '3 seconds' } as const;
    const ca = fs.readFileSync(pki.ca.cert);
    const noCert = { serverRootCACertificate: ca, serverNameOverride: 'temporal.test' };
    const stranger = {
      ...noCert,
      clientCertPair: { crt: fs.readFileSync(pki.strangerClient.cert), key: fs.readFileSync(pki.strangerClient.key) },
    };
    await expect(Connection.connect({ ...base, tls: noCert })).rejects.toThrow();
    await expect(Connection.connect({ ...base, tls: stranger })).rejects.toThrow();
    await expect(Connection.connect({ ...base, tls: false })).rejects.toThrow();
    await expect(NativeConnection.connect({ address: proxy.address, apiKey: API_KEY, tls: noCert })).rejects.toThrow();
    expect(proxy.refusedHandshakes).toBeGreaterThan(refusedBefore);
  });

  it('answers UNAUTHENTICATED to a client with the certificate but without the API key', async () => {
    const { apiKey: _dropped, ...options } = temporalConnectionOptions(loadConfig({ ...tlsEnv(), TEMPORAL_API_KEY: '' }));
    const err = await Connection.connect({ ...options, connectTimeout: '3 seconds' }).then(
      () => undefined,
      (e: any) => e,
    );
    expect(err?.cause?.code).toBe(16);
    expect(proxy.calls.some((c) => c.client === 'switchyard-client' && c.authorization === undefined)).toBe(true);
  });
});

describe('Temporal TLS configuration', () => {
  const configError = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('loadConfig accepted the configuration');
  };
  const address = { TEMPORAL_ADDRESS: 'temporal.example:7233' };

  it('needs certificate and key together, as readable PEM files that belong together', () => {
    expect(configError({ ...address, TEMPORAL_TLS_CERT: pki.client.cert })).toMatch(
      /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together/,
    );
    expect(configError({ ...address, TEMPORAL_TLS_KEY: pki.client.key })).toMatch(/must be set together/);
    const missing = path.join(pki.dir, 'nope.pem');
    expect(configError({ ...address, TEMPORAL_TLS_CA: missing })).toMatch(/TEMPORAL_TLS_CA: cannot read .*nope\.pem \(ENOENT\)/);
    expect(configError({ ...address, TEMPORAL_TLS_CERT: pki.client.cert, TEMPORAL_TLS_KEY: missing })).toMatch(
      /TEMPORAL_TLS_KEY: cannot read/,
    );
    expect(configError({ ...address, TEMPORAL_TLS_CA: pki.dir })).toMatch(/TEMPORAL_TLS_CA: .* is not a file/);
    const notPem = path.join(pki.dir, 'not.pem');
    fs.writeFileSync(notPem, 'hello');
    expect(configError({ ...address, TEMPORAL_TLS_CERT: notPem, TEMPORAL_TLS_KEY: pki.client.key })).toMatch(
      /TEMPORAL_TLS_CERT: .* is not a PEM file/,
    );
    // A key in the certificate's place: named, and no line of the key appears in the message.
    const keyAsCert = configError({ ...address, TEMPORAL_TLS_CERT: pki.client.key, TEMPORAL_TLS_KEY: pki.client.key });
    expect(keyAsCert).toMatch(/TEMPORAL_TLS_CERT: .* holds no readable certificate/);
    expect(keyAsCert).not.toContain(fs.readFileSync(pki.client.key, 'utf8').split('\n')[1]);
    expect(configError({ ...address, TEMPORAL_TLS_CERT: pki.client.cert, TEMPORAL_TLS_KEY: pki.strangerClient.key })).toMatch(
      /TEMPORAL_TLS_KEY does not belong to the certificate in TEMPORAL_TLS_CERT/,
    );
  });

  it('needs an external TEMPORAL_ADDRESS and refuses TEMPORAL_TLS=false with TLS files', () => {
    expect(configError({ TEMPORAL_API_KEY: API_KEY })).toMatch(/need TEMPORAL_ADDRESS/);
    expect(configError({ ...address, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: pki.ca.cert })).toMatch(/TEMPORAL_TLS=false contradicts/);
    expect(configError({ ...address, TEMPORAL_TLS: 'maybe' })).toMatch(/TEMPORAL_TLS: must be true or false/);
  });

  it('builds the connection options: an API key implies TLS unless TEMPORAL_TLS=false', () => {
    expect(temporalConnectionOptions(loadConfig({}))).toEqual({ address: '127.0.0.1:7233', tls: false });
    expect(temporalConnectionOptions(loadConfig({ ...address, TEMPORAL_API_KEY: API_KEY }))).toEqual({
      address: 'temporal.example:7233',
      tls: {},
      apiKey: API_KEY,
    });
    expect(temporalConnectionOptions(loadConfig({ ...address, TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'false' }))).toEqual({
      address: 'temporal.example:7233',
      tls: false,
      apiKey: API_KEY,
    });
    expect(temporalConnectionOptions(loadConfig({ ...address, TEMPORAL_TLS: 'true' })).tls).toEqual({});
    const full = temporalConnectionOptions(loadConfig(tlsEnv()));
    expect(full.tls).toMatchObject({ serverNameOverride: 'temporal.test' });
    expect(Buffer.from((full.tls as any).clientCertPair.crt).toString()).toBe(fs.readFileSync(pki.client.cert, 'utf8'));
    expect(Buffer.from((full.tls as any).serverRootCACertificate).toString()).toBe(fs.readFileSync(pki.ca.cert, 'utf8'));
  });
});
