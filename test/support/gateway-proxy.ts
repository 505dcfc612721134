// A fault-injecting gateway in front of a Superset (real or fake), as nginx stands in front of
// production instances: most calls pass through; a fixed share, chosen by a seeded PRNG (the same
// seed fails the same calls of the same sequence), is answered with nginx's own 502 or 504 page.
//
//   const gw = await startGatewayProxy({ target: sup.baseUrl, seed: 36, share: 0.1 });
//   ... register gw.baseUrl as the environment ...
//   gw.faults  // [{ method, path, status }]
//   await gw.close();
//
// A 502 ("upstream refused") never reaches Superset; a 504 ("upstream took too long") does, and
// its answer is thrown away, so a POST behind a 504 may well have landed, as behind nginx.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GatewayProxyOptions {
  target: string;
  seed: number;
  /** Share of the matching calls answered with a fault, 0..1. */
  share: number;
  /** Which calls may fail (default: every /api/v1/ call). */
  match?: (method: string, path: string) => boolean;
  /** Statuses to pick from, evenly (default 502 and 504). */
  statuses?: ReadonlyArray<502 | 503 | 504>;
  /**
   * Besides the share: every `every`-th call matching `match` (the 1st, the 1+every-th, ...) is
   * answered 504 after reaching Superset, e.g. each chart-data query's first try.
   */
  alsoFail?: { match: (method: string, path: string) => boolean; every: number };
  /** Fail exactly these calls (1-based, counted over the matching ones) instead of a share. */
  failCalls?: ReadonlySet<number>;
}

export interface GatewayProxy {
  baseUrl: string;
  faults: Array<{ method: string; path: string; status: number }>;
  /** Matching calls seen. */
  readonly calls: number;
  /** From now on, fail this share of the calls (the dice roll on from where they are). */
  setShare(share: number): void;
  /** Starts counting again, failing exactly these calls from now on (faults are forgotten). */
  reset(failCalls: ReadonlySet<number>): void;
  close(): Promise<void>;
}

const TITLES: Record<number, string> = { 502: '502 Bad Gateway', 503: '503 Service Temporarily Unavailable', 504: '504 Gateway Time-out' };

/** nginx's built-in error page, byte for byte as nginx 1.2x writes it. */
export function nginxPage(status: 502 | 503 | 504): string {
  const t = TITLES[status];
  return `<html>\r\n<head><title>${t}</title></head>\r\n<body>\r\n<center><h1>${t}</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n`;
}

/** mulberry32: a tiny seeded PRNG, so a seed always fails the same calls (no library needed for a test's dice). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startGatewayProxy(opts: GatewayProxyOptions): Promise<GatewayProxy> {
  const target = new URL(opts.target);
  const dice = prng(opts.seed);
  const statuses = opts.statuses ?? [502, 504];
  const match = opts.match ?? ((_m: string, p: string) => p.startsWith('/api/v1/'));
  const faults: GatewayProxy['faults'] = [];
  let calls = 0;
  let alsoCalls = 0;
  let failCalls = opts.failCalls;
  let share = opts.share;

  const forward = (req: http.IncomingMessage, body: Buffer, answer: (res: http.IncomingMessage) => void, failed: () => void) => {
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      answer,
    );
    up.on('error', failed);
    up.end(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0];
      let status: 502 | 503 | 504 | undefined;
      if (match(req.method ?? 'GET', path)) {
        calls++;
        const roll = dice();
        const pick = statuses[Math.floor(dice() * statuses.length)];
        if (failCalls ? failCalls.has(calls) : roll < share) status = pick;
      }
      if (opts.alsoFail?.match(req.method ?? 'GET', path) && alsoCalls++ % opts.alsoFail.every === 0) status = 504;
      const fault = () => {
        faults.push({ method: req.method ?? 'GET', path, status: status! });
        res.writeHead(status!, { server: 'nginx/1.24.0', 'content-type': 'text/html', connection: 'close' });
        res.end(nginxPage(status!));
      };
      if (status === 502) return fault();
      if (status) return forward(req, body, (up) => up.resume().on('end', fault), fault);
      forward(
        req,
        body,
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
        () => {
          res.writeHead(502, { server: 'nginx/1.24.0', 'content-type': 'text/html' });
          res.end(nginxPage(502));
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    faults,
    get calls() {
      return calls;
    },
    setShare(next) {
      share = next;
    },
    reset(next) {
      failCalls = next;
      calls = 0;
      faults.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
