/**
 * `npm run secrets:reencrypt`: every stored secret (environment passwords, git tokens, LLM keys)
 * encrypted again under SWITCHYARD_SECRET_KEY, in one transaction, reading what a key of
 * SWITCHYARD_PREVIOUS_SECRET_KEYS wrote. Idempotent; prints counts per column, never a secret.
 * The last step of a key rotation before the previous keys are dropped (docs/running.md).
 */
import { createKnex } from '../db/knex.ts';
import { reencryptSecrets } from '../db/secrets.ts';
import { loadConfig } from '../lib/config.ts';
import { keyringFor } from '../lib/crypto.ts';
import { resolveDatabaseUrl } from '../lib/stack-file.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const keyring = keyringFor(config, (m) => console.error(m));
  const knex = createKnex(resolveDatabaseUrl(config), { poolMax: 1 });
  try {
    const counts = await reencryptSecrets(knex, keyring);
    for (const c of counts) console.log(`${c.table}.${c.column}: ${c.rows} stored, ${c.reencrypted} re-encrypted`);
    const rows = counts.reduce((n, c) => n + c.rows, 0);
    const moved = counts.reduce((n, c) => n + c.reencrypted, 0);
    console.log(`total: ${rows} stored, ${moved} re-encrypted; every stored secret is now under key ${keyring.kid}`);
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`secrets:reencrypt failed, nothing was changed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
