import type { Knex } from 'knex';

/**
 * OIDC sign-in: one row per started login, keyed by the `state` sent to the provider. A row is
 * consumed (consumed_at set) by the first callback that presents its state; rows live at most
 * ten minutes for the callback and are purged an hour after creation.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oidc_login_states', (t) => {
    t.text('state').primary();
    t.text('nonce').notNullable();
    t.text('code_verifier').notNullable(); // PKCE (S256) verifier, sent only to the token endpoint
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('consumed_at', { useTz: true }).nullable();
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('oidc_login_states');
}
