import type { Knex } from 'knex';
import type { Keyring } from '../../lib/crypto.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { SupersetClientPool, type ClientLogger, type SupersetClient, type SupersetClientOptions } from '../../lib/superset/index.ts';
import type { SupersetConnection } from '../../lib/superset/types.ts';

export interface EnvironmentRow {
  id: string;
  name: string;
  base_url: string;
  username: string;
  password_encrypted: string;
  verify_tls: boolean;
  timeout_seconds: number;
  description: string | null;
  /** Deploys into it wait for another person's approval. */
  protected: boolean;
  created_at: Date;
  updated_at: Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** The row, or undefined for an unknown or malformed id (both are "no such environment"). */
export async function findEnvironment(knex: Knex, id: string): Promise<EnvironmentRow | undefined> {
  if (!isUuid(id)) return undefined;
  return knex<EnvironmentRow>('environments').where({ id }).first();
}

/** Like findEnvironment, but a 404 NotFoundError ("Environment '<id>' not found") when missing. */
export async function getEnvironment(knex: Knex, id: string): Promise<EnvironmentRow> {
  const row = await findEnvironment(knex, id);
  if (!row) throw new NotFoundError('Environment', id);
  return row;
}

export function connectionOf(row: EnvironmentRow, keyring: Keyring): SupersetConnection {
  return {
    baseUrl: row.base_url,
    username: row.username,
    password: keyring.decrypt(row.password_encrypted),
    verifyTls: row.verify_tls,
    timeoutSeconds: row.timeout_seconds,
  };
}

/**
 * Superset clients by environment id, for the API and for activities: loads the row, decrypts
 * the password and hands out the pooled client (tokens and sockets reused; a changed environment
 * gets a new client).
 *
 *   const clients = new EnvironmentClients({ knex, keyring, logger });
 *   const superset = await clients.client(envId);   // NotFoundError (404) for an unknown id
 */
export class EnvironmentClients {
  private readonly knex: Knex;
  private readonly keyring: Keyring;
  private readonly pool: SupersetClientPool;

  constructor(deps: { knex: Knex; keyring: Keyring; logger?: ClientLogger; options?: SupersetClientOptions }) {
    this.knex = deps.knex;
    this.keyring = deps.keyring;
    this.pool = new SupersetClientPool({ logger: deps.logger, ...deps.options });
  }

  async client(envId: string): Promise<SupersetClient> {
    return this.clientFor(await getEnvironment(this.knex, envId));
  }

  clientFor(row: EnvironmentRow): SupersetClient {
    return this.pool.get(row.id, `${new Date(row.updated_at).getTime()}:${row.password_encrypted}`, connectionOf(row, this.keyring));
  }

  evict(envId: string): void {
    this.pool.evict(envId);
  }

  close(): void {
    this.pool.close();
  }
}
