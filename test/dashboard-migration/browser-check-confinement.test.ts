import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDashboard } from '../../activities/browser-check/check.ts';
import { chromiumPool } from '../../lib/browser-check/chromium.ts';
import { CHROMIUM } from '../web/browser.ts';
import { createEnvironment } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * The browser check opens whatever page a registered Superset serves, so that page must not be
 * able to make Chromium reach anything but the Superset's own origin (scheme, host AND port: here
 * the hostile Superset and the listener it aims at are both on 127.0.0.1, on two ports).
 *
 * The hostile Superset is a local server answering the pages the check opens (the login page, the
 * sign-in post, the dashboard): a real Superset cannot be made to serve this page. Its dashboard
 * page shows a grid with no charts (the check takes the screenshot after it) and tries every way
 * out: an iframe of a same-origin 302 to the listener, a fetch of another same-origin redirect, a
 * WebSocket, a service worker whose script fetches the listener, WebRTC with the listener as its STUN
 * server, and plain subresources pointing there. The listener counts every TCP connection it accepts
 * and every UDP packet: it must get none.
 */
let h: Harness;
let hostile: http.Server;
let listener: http.Server;
/** The listener's UDP side, a STUN server for the page's WebRTC: it must get no packet either. */
let stun: dgram.Socket;
let stunPort: number;
let baseUrl: string;
let listenerUrl: string;
/** Every connection the listener accepted, with the request line when one came. */
const reached: string[] = [];
/** The paths the hostile Superset served (the page really tried its way out). */
const served: string[] = [];
const log = { info: () => undefined, warn: () => undefined };

function dashboardPage(to: string): string {
  const ws = to.replace(/^http:/, 'ws:');
  return `<!doctype html><html><body>
<div class="grid-container"></div>
<iframe src="/r/frame" width="600" height="400"></iframe>
<img src="${to}/img">
<link rel="stylesheet" href="${to}/css">
<script>
  fetch('/r/fetch').catch(() => undefined);
  fetch('${to}/direct', { mode: 'no-cors' }).catch(() => undefined);
  try { new WebSocket('${ws}/socket'); } catch (e) {}
  if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch(() => undefined);
  try {
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${stunPort}' }] });
    pc.createDataChannel('out');
    pc.createOffer().then((offer) => pc.setLocalDescription(offer)).catch(() => undefined);
  } catch (e) {}
</script>
</body></html>`;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  listener = http.createServer((req, res) => {
    reached.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'text/html');
    res.end('<h1>INTERNAL METADATA</h1>');
  });
  listener.on('connection', () => reached.push('connection'));
  listener.on('upgrade', (req, socket) => {
    reached.push(`upgrade ${req.url}`);
    socket.destroy();
  });
  listener.on('connect', (req, socket) => {
    reached.push(`CONNECT ${req.url}`);
    socket.destroy();
  });
  listenerUrl = await listen(listener);
  stun = dgram.createSocket('udp4');
  stun.on('message', (m, from) => reached.push(`udp ${m.length} bytes from ${from.address}:${from.port}`));
  await new Promise<void>((resolve) => stun.bind(0, '127.0.0.1', resolve));
  stunPort = stun.address().port;

  hostile = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    served.push(`${req.method} ${path}`);
    if (path === '/login/' && req.method === 'POST') {
      res.writeHead(302, { location: '/superset/welcome/', 'set-cookie': 'session=signed-in; Path=/; HttpOnly' }).end();
    } else if (path === '/login/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<form method="post"><input name="csrf_token" value="t"></form>');
    } else if (path.startsWith('/superset/dashboard/')) {
      res.writeHead(200, { 'content-type': 'text/html' }).end(dashboardPage(listenerUrl));
    } else if (path.startsWith('/r/')) {
      res.writeHead(302, { location: `${listenerUrl}/redirected${path}` }).end();
    } else if (path === '/sw.js') {
      res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end(`self.addEventListener('install', () => fetch('${listenerUrl}/from-worker', { mode: 'no-cors' }));`);
    } else {
      res.writeHead(404).end();
    }
  });
  baseUrl = await listen(hostile);
  h = await createHarness();
}, 60_000);

afterAll(async () => {
  await h?.close();
  stun?.close();
  await Promise.all([hostile, listener].map((s) => s && new Promise((resolve) => s.close(resolve))));
});

describe('the browser check against a hostile Superset page', () => {
  it(
    'lets nothing the page asks for reach another origin: redirects, frames, fetches, WebSockets, service workers, WebRTC',
    { timeout: 90_000 },
    async () => {
      const { stores, keyring, config } = h.boot.context;
      const envId = await createEnvironment(h, { baseUrl, username: 'admin', password: 'admin' });
      // The screenshot is kept here rather than under a task row (the check's own code is what is tested).
      const shots: Uint8Array[] = [];
      const browserScreenshots = {
        save: async (row: { png: Uint8Array }) => String(shots.push(row.png)),
      } as unknown as typeof stores.browserScreenshots;
      const svc = {
        deps: { stores: { ...stores, browserScreenshots }, keyring, config: { ...config, BROWSER_CHECK_BUDGET_SECONDS: 20 } },
        pool: chromiumPool({ executablePath: CHROMIUM, pages: 1 }),
      };
      try {
        const r = await checkDashboard(svc, { taskId: '00000000-0000-4000-8000-000000000001', targetEnvId: envId, dashboardId: 7 }, log);
        // The check itself went through: signed in, the page opened, its grid shown, a screenshot taken.
        expect(r.verdict, r.reason).toBe('passes');
        expect(shots).toHaveLength(1);
      } finally {
        await svc.pool.close();
      }
      // The page did try: Chromium asked the hostile Superset for its same-origin redirects.
      expect(served).toContain('GET /r/frame');
      expect(served).toContain('GET /r/fetch');
      expect(reached).toEqual([]);
    },
  );
});
