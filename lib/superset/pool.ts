import { SupersetClient, type SupersetClientOptions } from './client.ts';
import type { SupersetConnection } from './types.ts';

/**
 * One long-lived client per environment, so tokens, CSRF token and keep-alive sockets are reused
 * across requests. A client is keyed by the environment id and a version of its settings (e.g.
 * `updated_at`): changing an environment retires its old client.
 */
export class SupersetClientPool {
  private readonly clients = new Map<string, { version: string; client: SupersetClient }>();
  private readonly options: SupersetClientOptions;

  constructor(options: SupersetClientOptions = {}) {
    this.options = options;
  }

  get(key: string, version: string, connection: SupersetConnection): SupersetClient {
    const existing = this.clients.get(key);
    if (existing && existing.version === version) return existing.client;
    existing?.client.close();
    const client = new SupersetClient(connection, this.options);
    this.clients.set(key, { version, client });
    return client;
  }

  evict(key: string): void {
    this.clients.get(key)?.client.close();
    this.clients.delete(key);
  }

  close(): void {
    for (const { client } of this.clients.values()) client.close();
    this.clients.clear();
  }
}
