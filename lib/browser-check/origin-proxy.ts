/**
 * The only way out of a browser-check context: a small HTTP proxy on a random loopback port that
 * Chromium is pinned to (per context, `--proxy-server` with loopback NOT bypassed), and which lets
 * through requests to one origin only, the environment's Superset, by scheme, host and port.
 *
 * Chromium sends everything a page asks for through it: redirect hops, sub-frames, fetches,
 * WebSockets, workers, whatever the page's script does, since a proxied Chromium resolves no name
 * itself. Plain `http:` requests arrive in absolute form and are forwarded; `https:`, `ws:` and
 * `wss:` arrive as CONNECT tunnels to host:port. Anything else is answered 403 and nothing is
 * connected. The connection to the Superset goes through the egress policy (ALLOWED_UPSTREAM_HOSTS):
 * its lookup is the socket's own (lib/egress/connect.ts), so the address checked is the address
 * connected to. node:http parses every request; nothing here reads HTTP by hand.
 */
import http from 'node:http';
import net, { isIP, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { egressLookup } from '../egress/connect.ts';
import { egressRefusal, normaliseHost, type EgressPolicy } from '../egress/policy.ts';

export interface OriginProxy {
  /** The proxy's URL, for Playwright's `proxy.server`. */
  server: string;
  /** Stops listening and cuts every connection and tunnel it holds. */
  close(): void;
}

interface Endpoint {
  host: string;
  port: number;
}

/** Host and port of a URL, the scheme's default port spelled out. */
function endpointOf(url: URL): Endpoint {
  const port = url.port ? Number(url.port) : url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
  return { host: normaliseHost(url.hostname), port };
}

const sameEndpoint = (a: Endpoint, b: Endpoint) => a.host === b.host && a.port === b.port;

/** A CONNECT target (authority form, `host:port`) read by the URL parser; undefined when it is anything more. */
function connectTarget(authority: string | undefined): Endpoint | undefined {
  let url: URL;
  try {
    url = new URL(`http://${authority ?? ''}`);
  } catch {
    // expected: not an authority: no origin to forward to.
    return undefined;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || !authority?.includes(':')) return undefined;
  return endpointOf(url);
}

/** A forwarded request's absolute URL, when it is on the allowed origin (plain http only: https is tunnelled). */
function forwardTarget(target: string | undefined, origin: URL): URL | undefined {
  let url: URL;
  try {
    url = new URL(target ?? '');
  } catch {
    // expected: origin form: a request to the proxy itself.
    return undefined; // origin form: a request to the proxy itself
  }
  return url.protocol === 'http:' && origin.protocol === 'http:' && sameEndpoint(endpointOf(url), endpointOf(origin)) ? url : undefined;
}

/** A literal address never reaches a lookup (net connects to it directly), so the policy is asked first. */
async function literalAllowed(policy: EgressPolicy, host: string): Promise<void> {
  if (isIP(host)) await policy.addressesFor(host);
}

/** Hop-by-hop headers (RFC 9110 7.6.1), and any the Connection header names: never forwarded. */
function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const hop = new Set([
    'connection',
    'keep-alive',
    'proxy-connection',
    'proxy-authorization',
    'proxy-authenticate',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
    ...named,
  ]);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !hop.has(name)));
}

function refuse(socket: Duplex, status: 403 | 502): void {
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

export async function startOriginProxy(origin: URL, policy: EgressPolicy): Promise<OriginProxy> {
  const allowed = endpointOf(origin);
  const sockets = new Set<Socket | Duplex>();
  const track = (s: Socket | Duplex) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const agent = new http.Agent({ keepAlive: true, lookup: egressLookup(policy) } as http.AgentOptions);
  const server = http.createServer((req, res) => forward(req, res, origin, policy, agent));
  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    // The socket is ours from here (node:http no longer watches it): a browser hanging up is its close, not a fault.
    client.on('error', () => client.destroy());
    const target = connectTarget(req.url);
    if (!target || !sameEndpoint(target, allowed)) return refuse(client, 403);
    tunnel(client, head, target, policy, track);
  });
  // A WebSocket through a proxy is a CONNECT tunnel; an Upgrade on a forwarded request is not one.
  server.on('upgrade', (_req: http.IncomingMessage, client: Duplex) => {
    client.on('error', () => client.destroy());
    refuse(client, 403);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  return {
    server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.close();
      agent.destroy();
      for (const s of sockets) s.destroy();
    },
  };
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, origin: URL, policy: EgressPolicy, agent: http.Agent): void {
  const url = forwardTarget(req.url, origin);
  if (!url) {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('off the environment origin: refused by the browser check');
    return;
  }
  const failed = (err: Error) => {
    if (res.headersSent) res.destroy(err);
    else
      res
        .writeHead(egressRefusal(err) ? 403 : 502, { 'content-type': 'text/plain' })
        .end(egressRefusal(err)?.message ?? 'the environment did not answer');
  };
  const host = normaliseHost(url.hostname);
  literalAllowed(policy, host).then(() => {
    const up = http.request(
      {
        agent,
        host,
        port: endpointOf(url).port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: endToEnd(req.headers),
        setHost: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.on('error', (err) => res.destroy(err));
      },
    );
    up.on('error', failed);
    // The browser gave up on the request (a page closed): so does the upstream one.
    res.once('close', () => res.writableFinished || up.destroy());
    req.pipe(up);
  }, failed);
}

function tunnel(client: Duplex, head: Buffer, target: Endpoint, policy: EgressPolicy, track: (s: Socket) => void): void {
  literalAllowed(policy, target.host).then(
    () => {
      const up = net.connect({ host: target.host, port: target.port, lookup: egressLookup(policy) });
      track(up);
      let open = false;
      up.once('connect', () => {
        open = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      // Before the tunnel opens the browser is told why (403 refused, 502 unreachable); after, the tunnel just ends.
      up.on('error', (err) => (open ? client.destroy() : refuse(client, egressRefusal(err) ? 403 : 502)));
      client.once('close', () => up.destroy());
    },
    (err: Error) => refuse(client, egressRefusal(err) ? 403 : 502),
  );
}
