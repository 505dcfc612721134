import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { Config } from './config.ts';

export const EMBEDDED_TEMPORAL_HOST = '127.0.0.1';

export function temporalAddress(config: Config): string {
  return config.TEMPORAL_ADDRESS ?? `${EMBEDDED_TEMPORAL_HOST}:${config.TEMPORAL_PORT}`;
}

/** What both the client `Connection` and the worker's `NativeConnection` take to reach Temporal. */
export interface TemporalConnectionOptions {
  address: string;
  /** `false` is explicit plain gRPC: the SDK would otherwise turn TLS on whenever an API key is set. */
  tls: TLSConfig | false;
  apiKey?: string;
}

/** TLS is on when TEMPORAL_TLS says so, else when any TLS file, server name or API key is set. */
export function temporalTlsEnabled(config: Config): boolean {
  return (
    config.TEMPORAL_TLS ??
    [config.TEMPORAL_TLS_CERT, config.TEMPORAL_TLS_CA, config.TEMPORAL_TLS_SERVER_NAME, config.TEMPORAL_API_KEY].some(Boolean)
  );
}

/**
 * Connection options from the configuration. The PEM files are read here, at each connect, so a
 * rotated certificate is picked up by the next process start without a config change; loadConfig
 * has already checked that they exist and parse.
 */
export function temporalConnectionOptions(config: Config): TemporalConnectionOptions {
  const address = temporalAddress(config);
  const apiKey = config.TEMPORAL_API_KEY;
  if (!temporalTlsEnabled(config)) return { address, tls: false, ...(apiKey ? { apiKey } : {}) };
  const tls: TLSConfig = {};
  if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  if (config.TEMPORAL_TLS_CA) tls.serverRootCACertificate = fs.readFileSync(config.TEMPORAL_TLS_CA);
  if (config.TEMPORAL_TLS_CERT && config.TEMPORAL_TLS_KEY) {
    tls.clientCertPair = { crt: fs.readFileSync(config.TEMPORAL_TLS_CERT), key: fs.readFileSync(config.TEMPORAL_TLS_KEY) };
  }
  return { address, tls, ...(apiKey ? { apiKey } : {}) };
}

/** For logs: how Switchyard reaches Temporal, without any key material. */
export function describeTemporalConnection(config: Config): string {
  const parts = [temporalAddress(config), temporalTlsEnabled(config) ? 'TLS' : 'plain gRPC'];
  if (config.TEMPORAL_TLS_CERT) parts.push('client certificate');
  if (config.TEMPORAL_API_KEY) parts.push('API key');
  return parts.join(', ');
}
