import type { Knex } from 'knex';
import type { Keyring } from '../lib/crypto.ts';
import { EnvironmentStore } from './environments/store.ts';
import { GitConfigStore } from './git/configs.ts';
import { GitReviewStore } from './git/reviews.ts';
import { LlmProviderStore } from './llm-providers/store.ts';
import type { SecretColumnCount } from './secret-column.ts';

/**
 * Every stored secret (environment passwords, git tokens, LLM keys) encrypted again under the
 * keyring's current key, in one transaction: all move, or (a secret that does not decrypt) none.
 * Idempotent: what is already under the current key is left as it is. After it, the previous keys
 * are no longer needed to read anything stored.
 */
export async function reencryptSecrets(knex: Knex, keyring: Keyring): Promise<SecretColumnCount[]> {
  return knex.transaction(async (trx) => [
    await new EnvironmentStore(trx, keyring).reencryptSecrets(),
    await new GitConfigStore(trx, keyring).reencryptSecrets(),
    await new GitReviewStore(trx, keyring).reencryptSecrets(),
    await new LlmProviderStore(trx, keyring).reencryptSecrets(),
  ]);
}
