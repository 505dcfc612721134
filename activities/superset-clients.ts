import type { Knex } from 'knex';
import type { Keyring } from '../lib/crypto.ts';
import { NotFoundError } from '../lib/errors.ts';
import type { SupersetClient } from '../lib/superset/client.ts';
import { SupersetClientPool } from '../lib/superset/pool.ts';

/**
 * Superset clients for activities, by environment id: the environment row is read each time (a
 * changed environment retires its pooled client), the password decrypted only in memory.
 */
export function environmentClients(knex: Knex, keyring: Keyring) {
  const pool = new SupersetClientPool();
  const forEnvironment = async (envId: string): Promise<SupersetClient> => {
    const env = await knex('environments').where({ id: envId }).first();
    if (!env) throw new NotFoundError('Environment', envId);
    return pool.get(env.id, new Date(env.updated_at).toISOString(), {
      baseUrl: env.base_url,
      username: env.username,
      password: keyring.decrypt(env.password_encrypted),
      verifyTls: env.verify_tls,
      timeoutSeconds: env.timeout_seconds,
    });
  };
  return { forEnvironment, close: () => pool.close() };
}
