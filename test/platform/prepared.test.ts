// The hot statements (session lookup, task insert) run as named prepared statements: parsed once
// per connection, prepared again after a migration changed their result type, and run on the
// transaction's own connection when called inside one.
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { preparedQuery } from '../../db/prepared.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';

const name = `p_${randomBytes(5).toString('hex')}`;
let admin: Knex;
let knex: Knex;

beforeAll(async () => {
  admin = knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  // One connection, so every call below meets the statements the earlier ones prepared.
  knex = knexFactory({ client: 'pg', connection: withDatabase(inject('pgAdminUrl'), name), pool: { min: 0, max: 1 } });
  await knex.raw('create table items (id int primary key, label text)');
  await knex('items').insert([
    { id: 1, label: 'one' },
    { id: 2, label: 'two' },
  ]);
});
afterAll(async () => {
  await knex?.destroy();
  await admin?.raw(`drop database if exists ${name} with (force)`);
  await admin?.destroy();
});

const byId = (id: number) => preparedQuery<Record<string, unknown>>(knex, 'items.by_id', 'select * from items where id = $1', [id]);
const prepared = async () => (await knex.raw(`select name from pg_prepared_statements`)).rows.map((r: { name: string }) => r.name);

describe('preparedQuery', () => {
  it('prepares a statement once per connection and binds each call', async () => {
    expect(await byId(1)).toEqual([{ id: 1, label: 'one' }]);
    expect(await byId(2)).toEqual([{ id: 2, label: 'two' }]);
    expect(await prepared()).toEqual(['items.by_id']);
  });

  it('prepares again, once, when a migration changed the result type meanwhile', async () => {
    await byId(1);
    await knex.raw('alter table items add column weight int default 7');
    // PostgreSQL refuses the cached plan ("cached plan must not change result type"); the call
    // does not fail with it.
    expect(await byId(1)).toEqual([{ id: 1, label: 'one', weight: 7 }]);
    expect(await byId(2)).toEqual([{ id: 2, label: 'two', weight: 7 }]);
    expect(await prepared()).toEqual(['items.by_id']);
  });

  it('runs inside a transaction on its connection, so a rollback takes its writes back', async () => {
    // What the transaction saw is asserted outside it: an assertion failing inside would only roll it back.
    const trx = await knex.transaction();
    let rows: Array<{ id: number }>;
    let seen: unknown;
    try {
      rows = await preparedQuery<{ id: number }>(trx, 'items.insert', 'insert into items (id, label) values ($2, $1) returning id', [
        'three',
        3,
      ]);
      seen = await trx('items').where({ id: 3 }).first('label');
    } finally {
      await trx.rollback();
    }
    expect(rows).toEqual([{ id: 3 }]);
    expect(seen).toEqual({ label: 'three' });
    expect(await knex('items').where({ id: 3 }).first()).toBeUndefined();
  });

  it('passes an error other than a changed plan on', async () => {
    await expect(preparedQuery(knex, 'items.bad', 'select * from items where id = $1', ['not a number'])).rejects.toMatchObject({
      code: '22P02',
    });
  });
});
