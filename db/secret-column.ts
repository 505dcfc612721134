import type { Knex } from 'knex';
import type { Keyring } from '../lib/crypto.ts';

/** A stored secret's column, named by the store that owns its table. */
export interface SecretColumn {
  table: string;
  column: string;
}

/** What re-encrypting one column did: rows holding a secret, and how many were moved to the current key. */
export interface SecretColumnCount extends SecretColumn {
  rows: number;
  reencrypted: number;
}

/**
 * Encrypts again, with the keyring's current key and bound to its row, every secret of the column
 * that is not so already (a `v1` one, or one under a previous key). The rows are locked while it
 * works; run it inside the caller's transaction so that every column moves or none does. A secret
 * that does not decrypt stops it with a CiphertextError naming the row.
 */
export async function reencryptColumn(knex: Knex, keyring: Keyring, { table, column }: SecretColumn): Promise<SecretColumnCount> {
  const rows: Array<{ id: string; secret: string }> = await knex(table).select('id', { secret: column }).orderBy('id').forUpdate();
  let reencrypted = 0;
  for (const { id, secret } of rows) {
    if (keyring.isCurrent(secret)) continue;
    const binding = { table, column, rowId: id };
    // updated_at stays: the secret is the same, only its encryption changed.
    await knex(table)
      .where({ id })
      .update({ [column]: keyring.encrypt(keyring.decrypt(secret, binding), binding) });
    reencrypted += 1;
  }
  return { table, column, rows: rows.length, reencrypted };
}
