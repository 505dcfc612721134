import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bootstrap } from '../../api/bootstrap.ts';
import { createKnex, migrateLatest } from '../../db/knex.ts';
import { migrationSource } from '../../db/migrations/index.ts';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { loadConfig } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { TEST_SECRET } from '../support/harness.ts';

/**
 * Migrations as the Helm chart runs them: each API and worker pod's init container runs
 * `node scripts/migrate.ts` when it starts, so a rollout starts several at once on one database.
 * They must queue, not collide (knex's own lock refuses a second migrator instead of waiting, and
 * two first runs race to create its tables), and the API told not to migrate must refuse a
 * database whose schema is behind instead of serving on it.
 */
const admin = () => knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
const created: string[] = [];

async function freshDatabase(): Promise<string> {
  const name = `t_mig_${randomBytes(5).toString('hex')}`;
  const a = admin();
  await a.raw(`create database ${name}`);
  await a.destroy();
  created.push(name);
  return withDatabase(inject('pgAdminUrl'), name);
}

function runMigrate(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/migrate.ts'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

async function appliedNames(knex: Knex): Promise<string[]> {
  return (await knex('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
}

async function expectedNames(): Promise<string[]> {
  return (await migrationSource.getMigrations([])).map((m) => migrationSource.getMigrationName(m));
}

let pools: Knex[] = [];
beforeAll(() => {
  pools = [];
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.destroy()));
  const a = admin();
  for (const name of created) await a.raw(`drop database if exists ${name} with (force)`);
  await a.destroy();
});

describe('migrations run once however many pods start together', () => {
  it('three migrators started at once on a fresh database all succeed, and each migration is applied once', async () => {
    const url = await freshDatabase();
    const three = [createKnex(url, { poolMax: 2 }), createKnex(url, { poolMax: 2 }), createKnex(url, { poolMax: 2 })];
    pools.push(...three);
    const results = await Promise.allSettled(three.map((k) => migrateLatest(k)));
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok']);
    const applied = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    expect(applied.sort()).toEqual((await expectedNames()).sort());
    expect(await appliedNames(three[0]!)).toEqual(await expectedNames());
  });

  it('`node scripts/migrate.ts` three times at once: every one exits 0, one applies, the others find nothing to do', async () => {
    const url = await freshDatabase();
    const runs = await Promise.all([runMigrate(url), runMigrate(url), runMigrate(url)]);
    expect(
      runs.map((r) => r.code),
      runs.map((r) => r.output).join('\n'),
    ).toEqual([0, 0, 0]);
    const all = runs.map((r) => r.output).join('\n');
    expect(all.match(/"msg":"database migrated"/g)).toHaveLength(1);
    expect(all.match(/"msg":"database schema current"/g)).toHaveLength(2);
    const k = createKnex(url, { poolMax: 1 });
    pools.push(k);
    expect(await appliedNames(k)).toEqual(await expectedNames());
  });

  it('with DATABASE_MIGRATE_AT_START=false the API refuses a database whose schema is behind, naming the migrate command', async () => {
    const url = await freshDatabase();
    const config = loadConfig({
      DATABASE_URL: url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      SWITCHYARD_SECRET_KEY: TEST_SECRET,
      SWITCHYARD_DATA_DIR: `${inject('runDir')}/mig-${randomBytes(4).toString('hex')}`,
      DATABASE_MIGRATE_AT_START: 'false',
    });
    const logger = createLogger('silent', 'test');
    await expect(bootstrap(config, logger, url)).rejects.toThrow(/pending.*node scripts\/migrate\.ts/s);
    const k = createKnex(url, { poolMax: 1 });
    pools.push(k);
    expect(await k.schema.hasTable('users')).toBe(false);

    expect((await runMigrate(url)).code).toBe(0);
    const boot = await bootstrap(config, logger, url);
    await boot.close();
  });

  it('refuses a bad DATABASE_MIGRATE_AT_START', () => {
    expect(() => loadConfig({ DATABASE_MIGRATE_AT_START: 'sometimes' })).toThrow(/DATABASE_MIGRATE_AT_START/);
  });
});
