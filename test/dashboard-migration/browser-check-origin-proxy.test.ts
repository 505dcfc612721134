import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOriginProxy, type OriginProxy } from '../../lib/browser-check/origin-proxy.ts';
import { EgressPolicy } from '../../lib/egress/policy.ts';

/**
 * The browser-check context's proxy (lib/browser-check/origin-proxy.ts) on its own, spoken to by
 * node:http as Chromium speaks to it: plain http in absolute form, everything else as CONNECT.
 * It lets through the one origin (host and port: the Superset and another server on loopback are
 * told apart by port), and connects there only as the egress policy allows, a name at the address
 * the policy checked. browser-check-confinement.test.ts runs it under real Chromium.
 */
let superset: http.Server;
let other: http.Server;
let supersetPort: number;
let otherPort: number;
const hits: Record<'superset' | 'other', string[]> = { superset: [], other: [] };
const proxies: OriginProxy[] = [];

async function serve(name: 'superset' | 'other'): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    hits[name].push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] }).end(`${name} answered`);
  });
  s.on('connection', () => hits[name].push('connection'));
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return s;
}

beforeAll(async () => {
  [superset, other] = await Promise.all([serve('superset'), serve('other')]);
  supersetPort = (superset.address() as AddressInfo).port;
  otherPort = (other.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const p of proxies) p.close();
  await Promise.all([superset, other].map((s) => new Promise((resolve) => s.close(resolve))));
});

async function proxyFor(origin: string, policy = EgressPolicy.OPEN): Promise<URL> {
  const p = await startOriginProxy(new URL(origin), policy);
  proxies.push(p);
  return new URL(p.server);
}

/** A forwarded request, as a browser sends one for an http: URL through a proxy. */
function viaProxy(proxy: URL, url: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: proxy.hostname,
        port: proxy.port,
        path: url,
        headers: { host: URL.canParse(url) ? new URL(url).host : proxy.host, 'proxy-connection': 'keep-alive' },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

/** A CONNECT, as a browser opens a tunnel for https:, ws: and wss:; the status the proxy answered. */
function connectVia(proxy: URL, authority: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: authority, agent: false });
    req.once('connect', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}

describe("the browser check's origin proxy", () => {
  it('forwards the origin and tunnels to it; refuses another port, another host and a request to itself, connecting nowhere', async () => {
    const proxy = await proxyFor(`http://127.0.0.1:${supersetPort}`);
    const ok = await viaProxy(proxy, `http://127.0.0.1:${supersetPort}/superset/dashboard/1/?standalone=1`);
    expect(ok).toMatchObject({ status: 200, body: 'superset answered' });
    expect(ok.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(hits.superset).toContain(`GET /superset/dashboard/1/?standalone=1 host=127.0.0.1:${supersetPort}`);
    expect(await connectVia(proxy, `127.0.0.1:${supersetPort}`)).toBe(200);

    expect((await viaProxy(proxy, `http://127.0.0.1:${otherPort}/metrics`)).status).toBe(403);
    expect((await viaProxy(proxy, `http://localhost:${otherPort}/metrics`)).status).toBe(403);
    expect((await viaProxy(proxy, `http://169.254.169.254/latest/meta-data/`)).status).toBe(403);
    expect((await viaProxy(proxy, `/direct`)).status).toBe(403);
    expect(await connectVia(proxy, `127.0.0.1:${otherPort}`)).toBe(403);
    expect(await connectVia(proxy, `user@127.0.0.1:${supersetPort}`)).toBe(403);
    expect(await connectVia(proxy, `localhost:${supersetPort}`)).toBe(403);
    expect(hits.other).toEqual([]);
  });

  it('connects to the origin only as ALLOWED_UPSTREAM_HOSTS allows, a name at the very address the policy checked', async () => {
    const before = hits.superset.length;
    // A name that resolves outside the ranges: refused, nothing connected.
    const outside = EgressPolicy.parse(['10.0.0.0/8'], { resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const refused = await proxyFor(`http://superset.test:${supersetPort}`, outside);
    const r = await viaProxy(refused, `http://superset.test:${supersetPort}/login/`);
    expect(r.status).toBe(403);
    expect(r.body).toMatch(/superset\.test \(it resolves to 127\.0\.0\.1\) is not allowed by ALLOWED_UPSTREAM_HOSTS/);
    expect(await connectVia(refused, `superset.test:${supersetPort}`)).toBe(403);
    // A literal address outside the ranges: refused before any connection.
    const literal = await proxyFor(`http://127.0.0.1:${supersetPort}`, EgressPolicy.parse(['10.0.0.0/8']));
    expect((await viaProxy(literal, `http://127.0.0.1:${supersetPort}/login/`)).status).toBe(403);
    expect(await connectVia(literal, `127.0.0.1:${supersetPort}`)).toBe(403);
    expect(hits.superset.length).toBe(before);
    // Inside the ranges: the name is connected at the address the policy resolved (no resolver of its own).
    const inside = EgressPolicy.parse(['127.0.0.0/8'], { resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const allowed = await proxyFor(`http://superset.test:${supersetPort}`, inside);
    expect(await viaProxy(allowed, `http://superset.test:${supersetPort}/login/`)).toMatchObject({
      status: 200,
      body: 'superset answered',
    });
    expect(hits.superset).toContain(`GET /login/ host=superset.test:${supersetPort}`);
  });
});
