// A TLS-terminating gRPC proxy in front of the Temporal dev server (which has no TLS flags): it
// requires a client certificate signed by the test CA, optionally checks the API key (the
// `authorization` header; gRPC metadata is HTTP/2 headers, readable once TLS is terminated), and
// forwards each stream to the dev server's plain port with its headers, body and trailers.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface SeenCall {
  path: string;
  authorization: string | undefined;
  userAgent: string | undefined;
  /** CN of the client certificate that made the call. */
  client: string | undefined;
}

export interface TemporalTlsProxy {
  address: string;
  port: number;
  calls: SeenCall[];
  /** TLS handshakes refused (no or untrusted client certificate, not TLS at all). */
  refusedHandshakes: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  ':authority',
  ':scheme',
  ':path',
  ':method',
  ':status',
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
]);

function forwardable(headers: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
  return out;
}

export async function startTemporalTlsProxy(opts: {
  upstream: string;
  key: string | Buffer;
  cert: string | Buffer;
  /** CA that client certificates must chain to. */
  clientCa: string | Buffer;
  /** When set, calls without `authorization: Bearer <apiKey>` are answered UNAUTHENTICATED. */
  apiKey?: string;
}): Promise<TemporalTlsProxy> {
  const upstream = http2.connect(`http://${opts.upstream}`);
  upstream.on('error', () => undefined); // surfaced per stream below
  const calls: SeenCall[] = [];
  let refusedHandshakes = 0;

  const server = http2.createSecureServer({
    key: opts.key,
    cert: opts.cert,
    ca: opts.clientCa,
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on('tlsClientError', () => {
    refusedHandshakes++;
  });
  server.on('stream', (stream, headers) => {
    const peer = (stream.session?.socket as import('node:tls').TLSSocket | undefined)?.getPeerCertificate();
    const path = String(headers[':path']);
    const authorization = headers.authorization;
    calls.push({ path, authorization, userAgent: headers['user-agent'], client: peer?.subject?.CN as string | undefined });
    if (opts.apiKey !== undefined && authorization !== `Bearer ${opts.apiKey}`) {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'missing or wrong API key' },
        { endStream: true },
      );
      return;
    }
    const up = upstream.request({ ':method': String(headers[':method']), ':path': path, ...forwardable(headers) });
    let trailers: http2.OutgoingHttpHeaders = {};
    up.on('response', (h) => {
      if (stream.destroyed) return;
      // A trailers-only answer (an error status in the headers frame) is passed on as such.
      if (h['grpc-status'] !== undefined) stream.respond({ ':status': h[':status'], ...forwardable(h) }, { endStream: true });
      else stream.respond({ ':status': h[':status'], ...forwardable(h) }, { waitForTrailers: true });
    });
    up.on('trailers', (t) => {
      trailers = forwardable(t);
    });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    up.on('data', (chunk: Buffer) => {
      if (!stream.destroyed && stream.headersSent && !stream.writableEnded) stream.write(chunk);
    });
    up.on('end', () => {
      if (!stream.destroyed && stream.headersSent && !stream.writableEnded) stream.end();
    });
    up.on('error', () => {
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    stream.on('close', () => {
      if (!up.destroyed) up.close(http2.constants.NGHTTP2_CANCEL);
    });
    stream.pipe(up);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  return {
    address: `127.0.0.1:${port}`,
    port,
    calls,
    get refusedHandshakes() {
      return refusedHandshakes;
    },
    async close() {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      upstream.close();
    },
  };
}
