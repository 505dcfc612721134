/**
 * The wire under the Superset client: node:http/https with keep-alive, a hard deadline per
 * request, a response size cap, and no redirect following (a 3xx comes back as an answer, so the
 * client decides; nothing ever reaches another host by way of a Location header).
 */
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
  timeoutMs: number;
  maxBytes: number;
  /**
   * false: a fresh connection, closed afterwards. For non-idempotent calls, which are never
   * retried: a reused keep-alive socket the server closed meanwhile would fail them spuriously.
   */
  reuseConnection?: boolean;
}

export interface TransportResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type TransportFailure = 'timeout' | 'network' | 'too_large';

export class TransportError extends Error {
  override name = 'TransportError';
  readonly kind: TransportFailure;
  constructor(kind: TransportFailure, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
  }
}

export interface TransportOptions {
  verifyTls?: boolean;
  /** Concurrent sockets to the instance (default 8). */
  maxSockets?: number;
}

export class HttpTransport {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly freshHttpAgent: http.Agent;
  private readonly freshHttpsAgent: https.Agent;

  constructor(opts: TransportOptions = {}) {
    const common = { keepAlive: true, keepAliveMsecs: 10_000, maxSockets: opts.maxSockets ?? 8, maxFreeSockets: 4 };
    this.httpAgent = new http.Agent(common);
    this.httpsAgent = new https.Agent({ ...common, rejectUnauthorized: opts.verifyTls !== false });
    this.freshHttpAgent = new http.Agent({ keepAlive: false });
    this.freshHttpsAgent = new https.Agent({ keepAlive: false, rejectUnauthorized: opts.verifyTls !== false });
  }

  send(req: TransportRequest): Promise<TransportResponse> {
    const isHttps = req.url.protocol === 'https:';
    const mod = isHttps ? https : http;
    return new Promise<TransportResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: TransportError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.destroy();
        reject(err);
      };
      const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br', ...req.headers };
      if (req.body) headers['content-length'] = String(req.body.length);
      const reuse = req.reuseConnection !== false;
      const agent = isHttps ? (reuse ? this.httpsAgent : this.freshHttpsAgent) : reuse ? this.httpAgent : this.freshHttpAgent;
      const request = mod.request(req.url, { method: req.method, headers, agent });
      const timer = setTimeout(() => fail(new TransportError('timeout', `no complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
      request.on('error', (err) => fail(new TransportError('network', describeNetworkError(err), err)));
      request.on('response', (res) => {
        const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
        const stream =
          encoding === 'gzip' || encoding === 'x-gzip'
            ? res.pipe(zlib.createGunzip())
            : encoding === 'deflate'
              ? res.pipe(zlib.createInflate())
              : encoding === 'br'
                ? res.pipe(zlib.createBrotliDecompress())
                : res;
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > req.maxBytes) {
            fail(new TransportError('too_large', `answer larger than ${req.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        stream.on('error', (err) => fail(new TransportError('network', `reading the answer failed: ${err.message}`, err)));
        res.on('aborted', () => fail(new TransportError('network', 'connection closed mid-answer')));
        stream.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        });
      });
      if (req.body) request.end(req.body);
      else request.end();
    });
  }

  close(): void {
    for (const a of [this.httpAgent, this.httpsAgent, this.freshHttpAgent, this.freshHttpsAgent]) a.destroy();
  }
}

function describeNetworkError(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'CERT_HAS_EXPIRED':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate not trusted (${err.code}); fix the certificate or set verify_tls=false`;
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}
