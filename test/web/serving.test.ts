// The console middleware alone: without a build `/` says how to make one (never a 5xx), with one
// it serves files and the app fallback, tells the sign-in page whether OIDC is on, and never
// serves a file from outside web/dist.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, describe, expect, it } from 'vitest';
import { webConsole } from '../../api/http/web-console.ts';

const servers: Array<{ close(): void }> = [];
afterAll(() => servers.forEach((s) => s.close()));

async function serve(dist: string, oidc = false): Promise<string> {
  const app = new Koa();
  app.use(webConsole({ oidc, dist }));
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = 'next';
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('web console serving', () => {
  it('without a build answers a page saying how to build it', async () => {
    const base = await serve(path.join(os.tmpdir(), 'switchyard-no-such-dist'));
    const r = await fetch(`${base}/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('npm run build:web');
    expect((await fetch(`${base}/api/x`)).status).toBe(404);
  });

  it('serves files, the app for app URLs, the OIDC flag, and nothing outside the build', async () => {
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(
      path.join(dist, 'index.html'),
      '<!doctype html><html><head><title>x</title></head><body><div id="root"></div></body></html>',
    );
    fs.writeFileSync(path.join(dist, 'assets', 'app-1.js'), 'console.log(1)');
    fs.writeFileSync(path.join(path.dirname(dist), 'secret.txt'), 'secret');
    const base = await serve(dist, true);
    const js = await fetch(`${base}/assets/app-1.js`);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(js.headers.get('cache-control')).toContain('immutable');
    const app = await fetch(`${base}/releases/123`);
    expect(await app.text()).toContain('<meta name="switchyard-oidc" content="on">');
    expect((await fetch(`${base}/index.html`)).headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await fetch(`${base}/assets/app-2.js`)).status).toBe(404);
    for (const p of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt']) {
      expect(await (await fetch(`${base}${p}`)).text(), p).not.toContain('secret');
    }
    expect((await fetch(`${base}/`, { method: 'DELETE' })).status).toBe(404);
    expect((await fetch(`${base}/%00`)).status).toBe(200);
    const head = await fetch(`${base}/assets/app-1.js`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, '14']);
  });
});
