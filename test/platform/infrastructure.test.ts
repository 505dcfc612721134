import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { inject, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { withDatabase } from '../../lib/embedded/postgres.ts';
import { createKnex, fillPool } from '../../db/knex.ts';
import { ConfigError, loadConfig, PROJECT_ROOT } from '../../lib/config.ts';
import { devServerArgs } from '../../lib/embedded/temporal-dev-server.ts';
import { DYNAMIC_CONFIG_FILE } from '../../lib/embedded/temporal-server.ts';

describe('migrations', () => {
  it('apply, roll all the way down and apply again on a real PostgreSQL', async () => {
    const name = `m_${randomBytes(5).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${name}`);
    const knex = createKnex(withDatabase(inject('pgAdminUrl'), name));
    try {
      const tables = async () =>
        (await knex.raw(`select tablename from pg_tables where schemaname = 'public' and tablename not like 'knex%' order by 1`)).rows.map(
          (r: any) => r.tablename,
        );
      await knex.migrate.latest();
      expect(await tables()).toEqual(expect.arrayContaining(['tasks', 'task_logs', 'users', 'roles', 'api_keys', 'security_events']));
      await knex.migrate.rollback(undefined, true);
      expect(await tables()).toEqual([]);
      await knex.migrate.latest();
      expect((await tables()).length).toBeGreaterThan(5);
    } finally {
      await knex.destroy();
      await admin.raw(`drop database ${name} with (force)`);
      await admin.destroy();
    }
  });
});

describe('the API pool', () => {
  it('opens all its connections at start and keeps them (keepWarm, fillPool)', async () => {
    const name = `k_${randomBytes(5).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: inject('pgAdminUrl'), pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${name}`);
    const knex = createKnex(withDatabase(inject('pgAdminUrl'), name), { poolMax: 4, keepWarm: true });
    try {
      await fillPool(knex);
      const sessions = async () =>
        Number((await admin.raw(`select count(*) as n from pg_stat_activity where datname = ?`, [name])).rows[0].n);
      expect(await sessions()).toBe(4);
      // The pool never closes them as idle: its floor is its size.
      const pool = (knex.client as { pool: { min: number; numFree(): number } }).pool;
      expect(pool.min).toBe(4);
      expect(pool.numFree()).toBe(4);
    } finally {
      await knex.destroy();
      await admin.raw(`drop database ${name} with (force)`);
      await admin.destroy();
    }
  });
});

describe('configuration', () => {
  it('is validated at start with messages naming each bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', SWITCHYARD_SECRET_KEY: 'short' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', SWITCHYARD_SECRET_KEY: 'short' });
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT/);
      expect((err as Error).message).toMatch(/DATABASE_URL/);
      expect((err as Error).message).toMatch(/SWITCHYARD_SECRET_KEY: must be at least 32 characters/);
    }
    expect(() => loadConfig({ OIDC_ISSUER: 'https://idp.example' })).toThrow(/must be set together/);
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.TEMPORAL_UI_PORT).toBe(8233);
    expect(c.DATABASE_URL).toBeUndefined();
  });
});

describe('docker-compose.yml', () => {
  it('is valid compose for a production-like deployment with a scalable worker', () => {
    const doc = parse(fs.readFileSync('docker-compose.yml', 'utf8'), { merge: true });
    expect(Object.keys(doc.services).sort()).toEqual(['api', 'postgres', 'temporal', 'temporal-db', 'temporal-ui', 'worker']);
    for (const [name, svc] of Object.entries<any>(doc.services)) {
      expect(svc.image || svc.build, name).toBeTruthy();
      const deps = Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {});
      for (const dep of deps) expect(doc.services, `${name} depends on ${dep}`).toHaveProperty(dep);
    }
    expect(doc.services.temporal.environment.DB).toBe('postgres12');
    const worker = doc.services.worker;
    expect(worker.deploy.replicas).toBeGreaterThan(1);
    expect(worker.ports).toBeUndefined(); // replicas cannot share a host port
    expect(worker.container_name).toBeUndefined();
    expect(worker.environment.DATABASE_URL).toContain('@postgres:5432/');
    expect(worker.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(doc.services.api.environment.PORT).toBe('8080');
    for (const v of Object.keys(doc.volumes)) expect(JSON.stringify(doc.services)).toContain(`${v}:`);
  });

  it("gives Temporal Switchyard's dynamic config, the file the production topology's server reads", () => {
    const doc = parse(fs.readFileSync('docker-compose.yml', 'utf8'), { merge: true });
    const temporal = doc.services.temporal;
    const at = temporal.environment.DYNAMIC_CONFIG_FILE_PATH;
    expect(temporal.volumes).toContain(`./${path.relative(PROJECT_ROOT, DYNAMIC_CONFIG_FILE)}:${at}:ro`);
    const config = parse(fs.readFileSync(DYNAMIC_CONFIG_FILE, 'utf8'));
    // Approval gates are workflow updates; the transfer queue's limit is each hop's wait once a workflow spent its burst.
    expect(config['frontend.enableUpdateWorkflowExecution']).toEqual([{ value: true }]);
    expect(config['history.transferProcessorMaxPollRPS']).toEqual([{ value: 100 }]);
    // Eager activities would run a task's activities on the worker holding its workflow: one task would not spread.
    expect(config).not.toHaveProperty('system.enableActivityEagerExecution');
    // The embedded dev server of `npm start` gets the same knobs as flags.
    const flags = devServerArgs({ cli: 'temporal', logFile: 'x' }, 7233);
    for (const key of ['frontend.enableUpdateWorkflowExecution', 'history.transferProcessorMaxPollRPS'])
      expect(flags, key).toContain(`${key}=${config[key][0].value}`);
    expect(flags.join(' ')).not.toContain('system.enableActivityEagerExecution');
  });

  it('keeps Temporal off the host: no published frontend, the web UI on loopback only', () => {
    const doc = parse(fs.readFileSync('docker-compose.yml', 'utf8'), { merge: true });
    const published = (svc: any): string[] =>
      (svc.ports ?? []).map((p: unknown) => (typeof p === 'object' ? JSON.stringify(p) : String(p)));
    // Whoever reaches the frontend can start any workflow with any input.
    expect(doc.services.temporal.ports).toBeUndefined();
    expect(doc.services.temporal.networks).toEqual(['internal']);
    expect(doc.networks.internal.internal).toBe(true);
    for (const db of ['postgres', 'temporal-db']) expect(doc.services[db].networks, db).toEqual(['internal']);
    expect(published(doc.services['temporal-ui'])).toEqual(['127.0.0.1:8233:8080']);
    // Everything that talks to Temporal is on its network; nothing else publishes 7233.
    for (const name of ['api', 'worker', 'temporal-ui']) expect(doc.services[name].networks, name).toContain('internal');
    for (const [name, svc] of Object.entries<any>(doc.services)) {
      for (const p of published(svc)) expect(p, name).not.toMatch(/7233/);
    }
    // The TLS / API key settings reach both the API and the workers.
    for (const name of ['api', 'worker']) {
      for (const v of ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA', 'TEMPORAL_TLS_SERVER_NAME', 'TEMPORAL_API_KEY']) {
        expect(doc.services[name].environment, `${name} ${v}`).toHaveProperty(v);
      }
    }
  });
});
