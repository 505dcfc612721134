import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import pg from 'pg';
import { PROJECT_ROOT } from '../config.ts';
import { freePort } from './free-port.ts';

/**
 * The real Temporal server (frontend, history, matching and its system worker in one process) on
 * PostgreSQL, as a production deployment runs it, instead of the CLI's dev server on SQLite. Built
 * from its Go module like the CLI; its schema is set up by its own SQL tool.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const MODULE = 'go.temporal.io/server';

export interface TemporalServerTools {
  server: string;
  sql: string;
  /** The module's schema folder (postgresql/v12/{temporal,visibility}/versioned). */
  schemaDir: string;
}

export function cachedServerDir(toolsDir = path.join(PROJECT_ROOT, '.tools')): string {
  return path.join(toolsDir, 'temporal-server', TEMPORAL_SERVER_VERSION);
}

function goBinary(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'Go is not installed, so the Temporal server cannot be built (Debian: `apt-get install golang-go`; or https://go.dev/dl).',
    );
  }
}

/** The module's source folder in Go's module cache, downloaded when missing (the schema files live there). */
function moduleDir(go: string): string {
  const out = execFileSync(go, ['mod', 'download', '-json', `${MODULE}@${TEMPORAL_SERVER_VERSION}`], {
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

/**
 * The server and SQL tool from the project cache, built with `go install` when absent (about 15
 * minutes cold on 2 busy cores; the module is the one the CLI already depends on). The schema
 * files are copied beside them so a cleaned module cache does not matter later.
 */
export function ensureTemporalServer(opts: { log?: (m: string) => void } = {}): TemporalServerTools {
  const log = opts.log ?? ((m: string) => console.error(m));
  const dir = cachedServerDir();
  const tools = { server: path.join(dir, 'server'), sql: path.join(dir, 'sql'), schemaDir: path.join(dir, 'schema') };
  if (fs.existsSync(tools.server) && fs.existsSync(tools.sql) && fs.existsSync(tools.schemaDir)) return tools;
  const go = goBinary();
  const staging = `${dir}.building-${process.pid}`;
  fs.mkdirSync(staging, { recursive: true });
  const started = Date.now();
  try {
    if (!fs.existsSync(tools.server) || !fs.existsSync(tools.sql)) {
      log(`building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool with go install (one time, up to 15 minutes)...`);
      execFileSync(
        go,
        ['install', `${MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`, `${MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`],
        {
          env: { ...process.env, GOBIN: staging, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
          stdio: ['ignore', 'inherit', 'inherit'],
        },
      );
    } else {
      for (const b of ['server', 'sql']) fs.copyFileSync(path.join(dir, b), path.join(staging, b));
    }
    fs.cpSync(path.join(moduleDir(go), 'schema', 'postgresql'), path.join(staging, 'schema', 'postgresql'), { recursive: true });
    fs.chmodSync(staging, 0o755);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    // A concurrent build may have won; either is the same pinned version.
    if (!fs.existsSync(tools.schemaDir)) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(staging, dir);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal server ready in ${dir} (${Math.round((Date.now() - started) / 1000)} s)`);
  return tools;
}

export const TEMPORAL_DATABASES = { default: 'temporal', visibility: 'temporal_visibility' } as const;

/**
 * Creates the two databases on the server `adminUrl` points at (when missing) and brings each to
 * the schema version this server release needs with the SQL tool (idempotent: a set-up database is
 * only updated).
 */
export async function setupTemporalSchema(tools: TemporalServerTools, adminUrl: string): Promise<void> {
  const u = new URL(adminUrl);
  for (const [kind, db] of Object.entries(TEMPORAL_DATABASES)) {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    let fresh: boolean;
    try {
      const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [db]);
      if (!rowCount) await client.query(`create database "${db}"`);
      fresh = !rowCount;
    } finally {
      await client.end();
    }
    const sql = (...args: string[]) =>
      execFileSync(tools.sql, ['--plugin', 'postgres12', '--endpoint', u.hostname, '--port', u.port || '5432', '--db', db, ...args], {
        // The password goes through the environment, not the command line other users can read.
        env: { ...process.env, SQL_USER: decodeURIComponent(u.username), SQL_PASSWORD: decodeURIComponent(u.password) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    const dir = path.join(tools.schemaDir, 'postgresql', 'v12', kind === 'default' ? 'temporal' : 'visibility', 'versioned');
    if (fresh || !(await hasSchemaTable(withDb(adminUrl, db)))) sql('setup-schema', '-v', '0.0');
    sql('update-schema', '-d', dir);
  }
}

async function hasSchemaTable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return !!(await client.query(`select 1 from information_schema.tables where table_name = 'schema_version'`)).rowCount;
  } finally {
    await client.end();
  }
}

function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export interface TemporalServer {
  address: string;
  pid: number;
  stop(): Promise<void>;
}

export interface TemporalServerOptions {
  tools: TemporalServerTools;
  /** A PostgreSQL URL whose user may create databases; the server's two databases live beside it. */
  adminUrl: string;
  /** Config, dynamic config and log live here. */
  dir: string;
  /** The frontend's gRPC port; a free one when absent. */
  port?: number;
  namespace?: string;
  /** Called with the server's pid at every (re)start (the caller may lower its priority). */
  onStart?: (pid: number) => void;
  /** Connections per service and store (four services in the process share the database). */
  maxConns?: number;
}

/** Sets up the schema, writes the config, starts the server and waits until `namespace` takes requests. */
export async function startTemporalServer(opts: TemporalServerOptions): Promise<TemporalServer> {
  await setupTemporalSchema(opts.tools, opts.adminUrl);
  const ports = {
    frontend: opts.port ?? (await freePort()),
    ...Object.fromEntries(await Promise.all(['frontendHttp', 'history', 'matching', 'worker'].map(async (k) => [k, await freePort()]))),
    ...Object.fromEntries(
      await Promise.all(
        ['frontendMembership', 'historyMembership', 'matchingMembership', 'workerMembership'].map(async (k) => [k, await smallPort()]),
      ),
    ),
  } as Record<string, number>;
  fs.mkdirSync(path.join(opts.dir, 'config'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(opts.dir, 'config', 'switchyard.yaml'), serverConfig(opts, ports), { mode: 0o600 });
  fs.copyFileSync(DYNAMIC_CONFIG_FILE, path.join(opts.dir, 'dynamicconfig.yaml'));
  const logFile = path.join(opts.dir, 'server.log');
  const supervisor = new Supervisor(
    opts.tools.server,
    ['--root', opts.dir, '--config', 'config', '--env', 'switchyard', '--allow-no-auth', 'start'],
    logFile,
    opts.onStart,
  );
  const address = `127.0.0.1:${ports.frontend}`;
  try {
    await untilReady(address, opts.namespace ?? 'default', () => supervisor.gaveUp, logFile);
  } catch (err) {
    await supervisor.stop();
    throw err;
  }
  return {
    address,
    get pid() {
      return supervisor.pid;
    },
    stop: () => supervisor.stop(),
  };
}

/**
 * Runs the server and starts it again when it dies on its own, as systemd's Restart=on-failure or
 * a container's restart policy would: its state is in PostgreSQL. On a loaded machine the server's
 * system worker can time out starting its SDK workers and exits (a `fatal` "error starting
 * scanner"); measured here at a load average of 30 on 2 cores.
 */
class Supervisor {
  private child!: ChildProcess;
  private stopping = false;
  private restarts = 0;
  gaveUp: string | null = null;

  private readonly bin: string;
  private readonly args: string[];
  private readonly logFile: string;
  private readonly onStart?: (pid: number) => void;

  constructor(bin: string, args: string[], logFile: string, onStart?: (pid: number) => void) {
    this.bin = bin;
    this.args = args;
    this.logFile = logFile;
    this.onStart = onStart;
    this.spawn();
  }

  get pid(): number {
    return this.child.pid!;
  }

  private spawn(): void {
    const out = fs.openSync(this.logFile, 'a');
    this.child = spawn(this.bin, this.args, { stdio: ['ignore', out, out], detached: true });
    fs.closeSync(out);
    this.onStart?.(this.child.pid!);
    this.child.once('exit', (code) => {
      if (this.stopping) return;
      if (++this.restarts > MAX_RESTARTS) {
        this.gaveUp = `exited with code ${code} (${this.restarts - 1} restarts already)`;
        return;
      }
      fs.appendFileSync(this.logFile, `# switchyard: the server exited with code ${code}; starting it again\n`);
      setTimeout(() => this.stopping || this.spawn(), 1000).unref();
    });
  }

  stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}

const MAX_RESTARTS = 20;

/**
 * A free port below 32768: the server stores its membership ports in a PostgreSQL smallint, and
 * the OS hands out ephemeral ports above that.
 */
async function smallPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Registers the namespace once the frontend answers, then waits until it serves requests (its cache refreshes every few seconds). */
async function untilReady(address: string, namespace: string, gaveUp: () => string | null, logFile: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  let registered = false;
  for (;;) {
    if (gaveUp()) throw new Error(`the Temporal server ${gaveUp()} before it was ready; see ${logFile}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: '2 seconds' });
      try {
        const svc = conn.workflowService;
        if (!registered) {
          const known = await svc.describeNamespace({ namespace }).then(
            () => true,
            // expected: describeNamespace fails for a namespace not registered yet: it is registered next.
            () => false,
          );
          if (!known) await svc.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') });
          registered = true;
        }
        await svc.countWorkflowExecutions({ namespace, query: '' });
        return;
      } finally {
        await conn.close();
      }
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(
          `the Temporal server did not serve namespace ${namespace} on ${address} within 180 s (${String(err)}); see ${logFile}`,
        );
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The server's dynamic config, shared with docker-compose.yml (the dev server gets the same knobs as flags, lib/embedded/temporal-dev-server.ts). */
export const DYNAMIC_CONFIG_FILE = path.join(PROJECT_ROOT, 'deploy', 'temporal', 'dynamicconfig.yaml');

function serverConfig(opts: TemporalServerOptions, ports: Record<string, number>): string {
  const u = new URL(opts.adminUrl);
  const store = (db: string, conns: number) => `      sql:
        pluginName: postgres12
        databaseName: ${db}
        connectAddr: "${u.hostname}:${u.port || '5432'}"
        connectProtocol: tcp
        user: ${JSON.stringify(decodeURIComponent(u.username))}
        password: ${JSON.stringify(decodeURIComponent(u.password))}
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: 1h`;
  const service = (name: string, grpc: number, membership: number, http?: number) => `  ${name}:
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:
    default:
${store(TEMPORAL_DATABASES.default, opts.maxConns ?? 10)}
    visibility:
${store(TEMPORAL_DATABASES.visibility, 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
${service('frontend', ports.frontend, ports.frontendMembership, ports.frontendHttp)}
${service('history', ports.history, ports.historyMembership)}
${service('matching', ports.matching, ports.matchingMembership)}
${service('worker', ports.worker, ports.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.frontend}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${JSON.stringify(path.join(opts.dir, 'dynamicconfig.yaml'))}
  pollInterval: 10s
`;
}

if (import.meta.main) {
  console.log(JSON.stringify(ensureTemporalServer()));
}
