import http from 'node:http';
import { collectProcessMetrics, registry } from './metrics.ts';

export interface MetricsServer {
  /** host:port it listens on. */
  address: string;
  close(): Promise<void>;
}

/**
 * Serves this process's registry at `/metrics` on a listener of its own (never the API's public
 * one): METRICS_PORT for the API, WORKER_METRICS_PORT for a worker (lib/config.ts).
 */
export async function serveMetrics(host: string, port: number): Promise<MetricsServer> {
  collectProcessMetrics();
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as { address: string; port: number };
  return {
    address: `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
