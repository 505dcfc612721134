import { SupersetClient, type SupersetClientOptions } from './client.ts';
import type { ExchangeObserver } from './transport/options.ts';
import type { SupersetConnection } from './types.ts';

/** How to reach one instance now, and a version of those settings (e.g. the row's `updated_at`). */
export interface ResolvedConnection {
  version: string;
  connection: SupersetConnection;
}

/** A client's options, and the observer of each instance's exchanges, told its key (the environment id). */
export type PoolOptions = SupersetClientOptions & { observerFor?: (key: string) => ExchangeObserver };

/** Looks an instance up by its key (an environment id); throws when there is no such instance. */
export type ConnectionResolver = (key: string) => Promise<ResolvedConnection>;

/**
 * One long-lived client per instance, so tokens, CSRF token and keep-alive connections are
 * reused across requests. Clients are keyed by instance and by the version of its settings:
 * changed settings retire the old client.
 *
 *   const pool = new SupersetClientPool(resolve, { logger });
 *   const superset = await pool.client(envId);
 */
export class SupersetClientPool {
  private readonly clients = new Map<string, { version: string; client: SupersetClient }>();
  private readonly resolve: ConnectionResolver;
  private readonly options: PoolOptions;

  constructor(resolve: ConnectionResolver, options: PoolOptions = {}) {
    this.resolve = resolve;
    this.options = options;
  }

  /** The instance's client; whatever the resolver throws for an unknown key is thrown as is. */
  async client(key: string): Promise<SupersetClient> {
    return this.clientFor(key, await this.resolve(key));
  }

  /** The client for settings the caller already resolved. */
  clientFor(key: string, resolved: ResolvedConnection): SupersetClient {
    const existing = this.clients.get(key);
    if (existing && existing.version === resolved.version) return existing.client;
    existing?.client.close();
    const { observerFor, ...options } = this.options;
    const client = new SupersetClient(resolved.connection, { ...options, observe: observerFor?.(key) });
    this.clients.set(key, { version: resolved.version, client });
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
