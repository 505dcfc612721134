import { SupersetClient, type SupersetClientOptions } from './client.ts';
import { CircuitBreaker, type CircuitListener, type CircuitPolicy } from './transport/circuit.ts';
import type { ExchangeObserver } from './transport/options.ts';
import type { SupersetConnection } from './types.ts';

/** How to reach one instance now, and a version of those settings (e.g. the row's `updated_at`). */
export interface ResolvedConnection {
  version: string;
  connection: SupersetConnection;
}

/** A client's options, and the observer of each instance's exchanges, told its key (the environment id). */
export type PoolOptions = Omit<SupersetClientOptions, 'circuit'> & {
  observerFor?: (key: string) => ExchangeObserver;
  /** One circuit breaker per instance (transport/circuit.ts): its policy, clock and listener. None: no breaker. */
  circuit?: { policy: CircuitPolicy; now?: () => number; listenerFor?: (key: string) => CircuitListener };
};

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
  private readonly clients = new Map<string, { version: string; client: SupersetClient; circuit?: CircuitBreaker }>();
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
    const { observerFor, circuit: breaker, ...options } = this.options;
    // Changed settings (another host, say) start with a closed circuit of their own.
    const circuit = breaker
      ? new CircuitBreaker(new URL(resolved.connection.baseUrl).host, { ...breaker, listener: breaker.listenerFor?.(key) })
      : undefined;
    const client = new SupersetClient(resolved.connection, { ...options, observe: observerFor?.(key), circuit });
    this.clients.set(key, { version: resolved.version, client, circuit });
    return client;
  }

  /** The instance answered someone else (a connection test with a client of its own): its circuit closes now. */
  resetCircuit(key: string): void {
    this.clients.get(key)?.circuit?.reset();
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
