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
//
// It also records every call it passes on (method, path, decoded rison `q`, JSON body), so a test
// counts and orders what Switchyard asks of a REAL Superset, and holds a call until an event (another
// call seen, a task's log line) with no timer: `startRecordingProxy(baseUrl)` is the proxy with no faults.
//
//   const rec = await startRecordingProxy(superset('a').baseUrl);
//   rec.hold({ method: 'POST', path: '/api/v1/dashboard/import/' }, rec.seen({ path: '/api/v1/chart/data' }));
//   rec.count('/api/v1/chart/data', rec.mark());  rec.maxInFlight('/api/v1/chart/data');
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import rison from 'rison';

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

/** A call the proxy passed on (or answered with a fault), in the order it arrived. */
export interface ProxiedRequest {
  method: string;
  path: string;
  /** The decoded rison `q` of a list read or export (undefined without one, or when it does not decode). */
  q?: unknown;
  /** A JSON body as sent (a chart-data query context, a PUT's fields). */
  json?: unknown;
  /** The answer's status once it came (a fault's too); absent while the call is held or in flight. */
  status?: number;
}

export interface CallMatch {
  method?: string;
  path?: RegExp | string;
  /** Asked of the decoded `q`. */
  query?: (q: unknown) => boolean;
  /** Asked on arrival (after the call is recorded): whether this call is the one meant. */
  when?: () => boolean;
}

export interface GatewayProxy {
  baseUrl: string;
  /** Every call, in arrival order. */
  requests: ProxiedRequest[];
  /** Calls whose path matches, optionally only those since a mark. */
  count(path: RegExp | string, since?: number): number;
  mark(): number;
  /** Settles on the first call from now on that matches. */
  seen(match: CallMatch): Promise<void>;
  /** Holds matching calls (not yet passed on) until `until` settles; no timer releases them. Until clearHolds. */
  hold(match: CallMatch, until: Promise<unknown>): void;
  /** Passes matching calls on `ms` later, which keeps them in flight longer (until clearHolds). */
  slow(match: CallMatch, ms: number): void;
  clearHolds(): void;
  /** The most calls on `path` Switchyard had sent and not yet been answered at once, since the start or resetInFlight. */
  maxInFlight(path: string): number;
  resetInFlight(): void;
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

const matches = (m: CallMatch, r: ProxiedRequest) =>
  (!m.method || m.method === r.method) &&
  (!m.path || (typeof m.path === 'string' ? r.path === m.path : m.path.test(r.path))) &&
  (!m.query || m.query(r.q));

/** What a call carries, as the proxy records it. */
function recordOf(req: http.IncomingMessage, body: Buffer): ProxiedRequest {
  const url = new URL(req.url ?? '/', 'http://proxy');
  const record: ProxiedRequest = { method: req.method ?? 'GET', path: url.pathname };
  const rawQ = url.searchParams.get('q');
  // A `q` that is not rison is Superset's to refuse (400); the record just has none.
  if (rawQ !== null) record.q = decodeOrUndefined(() => rison.decode(rawQ));
  if (String(req.headers['content-type'] ?? '').startsWith('application/json') && body.length)
    record.json = decodeOrUndefined(() => JSON.parse(body.toString('utf8')));
  return record;
}

function decodeOrUndefined(decode: () => unknown): unknown {
  try {
    return decode();
  } catch (e) {
    if (e instanceof Error) return undefined; // recorded as absent; the call still goes to Superset, which answers it
    throw e;
  }
}

/** A recording proxy with no faults in front of `target` (a real Superset's base URL). */
export function startRecordingProxy(target: string): Promise<GatewayProxy> {
  return startGatewayProxy({ target, seed: 0, share: 0 });
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
  const requests: ProxiedRequest[] = [];
  const watchers: Array<CallMatch & { resolve: () => void }> = [];
  let holds: Array<CallMatch & { until: Promise<unknown> }> = [];
  let delays: Array<CallMatch & { ms: number }> = [];
  const inFlight = new Map<string, { now: number; max: number }>();

  /** Records the call, settles its watchers and waits for what holds or slows it. */
  const admit = async (record: ProxiedRequest) => {
    requests.push(record);
    for (const w of watchers.filter((x) => matches(x, record))) {
      watchers.splice(watchers.indexOf(w), 1);
      w.resolve();
    }
    const held = holds.find((x) => matches(x, record) && (!x.when || x.when()));
    // Released by the event (kept or broken alike): the call then goes on to Superset.
    if (held) await Promise.allSettled([held.until]);
    const delay = delays.find((x) => matches(x, record));
    if (delay) await new Promise((r) => setTimeout(r, delay.ms));
  };
  /** Counts a call on `path` in flight; the answer's end calls what it answers (once). */
  const track = (path: string) => {
    const n = inFlight.get(path) ?? { now: 0, max: 0 };
    inFlight.set(path, n);
    n.now++;
    n.max = Math.max(n.max, n.now);
    return () => void n.now--;
  };

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
    // A call that cannot be answered ends its connection with the reason (the client sees a reset, not a hang).
    req.on('end', () => {
      answerCall(req, res, Buffer.concat(chunks)).catch((e: unknown) => res.destroy(e instanceof Error ? e : new Error(String(e))));
    });
  });

  const answerCall = async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    // In flight from the moment Switchyard sent it until its answer is over (held or slowed calls included).
    res.on('close', track((req.url ?? '/').split('?')[0]!));
    const record = recordOf(req, body);
    res.on('finish', () => (record.status = res.statusCode));
    await admit(record);
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
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    faults,
    requests,
    count: (path, since = 0) =>
      requests.slice(since).filter((r) => (typeof path === 'string' ? r.path === path : path.test(r.path))).length,
    mark: () => requests.length,
    seen: (match) => new Promise<void>((resolve) => watchers.push({ ...match, resolve })),
    hold(match, until) {
      holds.push({ ...match, until });
    },
    slow(match, ms) {
      delays.push({ ...match, ms });
    },
    clearHolds() {
      holds = [];
      delays = [];
    },
    maxInFlight: (path) => inFlight.get(path)?.max ?? 0,
    resetInFlight() {
      for (const n of inFlight.values()) n.max = n.now;
    },
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
