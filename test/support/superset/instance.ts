// Start a real Apache Superset (installed from PyPI by scripts/superset/setup.sh) on loopback.
//
//   const sup = await startSuperset({ version: '6.1.0', dataDir: '.data/superset/it-6.1.0' });
//   ... sup.baseUrl, sup.username, sup.password ...
//   await sup.stop();
//
// Layout of dataDir (all created here):
//   superset_config.py   regenerated on every start (SECRET_KEY kept in .secret_key)
//   superset.db          SQLite metadata DB, or
//   postgres/            with metadata: 'postgresql', the instance's own PostgreSQL cluster
//   instance.json        written only after db upgrade + init + create-admin succeeded
//   init.log             output of the superset CLI steps
//   server.log           gunicorn stdout/stderr (access log included)
//   server.pid           pid of the running server (process group leader)
//
// Only node built-ins are used, and the project's embedded PostgreSQL for PostgreSQL metadata.
// Runs with Node 24 native type stripping.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { savePostgresTemplate, startMetadataPostgres, type MetadataPostgres } from './postgres-metadata.ts';
import { freePort } from '../../../lib/embedded/free-port.ts';

export const REPO_ROOT: string = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const SETUP_SCRIPT: string = join(REPO_ROOT, 'scripts/superset/setup.sh');
export const DEFAULT_VERSIONS: readonly string[] = ['6.1.0', '6.0.0'];

const DEFAULT_USERNAME = 'admin';
const DEFAULT_PASSWORD = 'admin';
const STATE_FILE = 'instance.json';

/** Where an instance keeps its metadata (users, dashboards, charts, datasets, databases). */
export type MetadataBackend = 'sqlite' | 'postgresql';

export interface StartSupersetOptions {
  /** apache-superset version, e.g. "6.1.0". Installed by setup.sh if missing. */
  version: string;
  /** Directory holding the metadata DB, config and logs. Created if missing. */
  dataDir: string;
  /** TCP port on 127.0.0.1. A free one is picked when omitted. */
  port?: number;
  adminUsername?: string;
  adminPassword?: string;
  /** Wipe dataDir first (only if it looks like one of ours, or is empty). */
  fresh?: boolean;
  /**
   * Seed a new dataDir from .tools/superset/<version>/template/superset.db, a copy of the first
   * freshly initialised metadata DB (saved on the first full init), when the admin credentials
   * match it. Turns a ~18 s first start into ~3 s. Default true.
   */
  useTemplate?: boolean;
  /** Milliseconds to wait for GET /health after the server process starts. Default 180 000. */
  readyTimeoutMs?: number;
  /** gunicorn workers (default 1) and threads per worker (default 8). */
  workers?: number;
  threads?: number;
  /** Extra FEATURE_FLAGS merged over the defaults. */
  featureFlags?: Record<string, boolean>;
  /** Python appended verbatim to superset_config.py (e.g. "WTF_CSRF_ENABLED = False"). */
  extraConfig?: string;
  /** Extra environment variables for every superset process. */
  env?: Record<string, string>;
  /**
   * 'postgresql' keeps the metadata in PostgreSQL, as production deployments do: an embedded
   * cluster of the instance's own, seeded from .tools/superset/<version>/template/postgres like the
   * SQLite template (see postgres-metadata.ts). Needs psycopg2 in the venv (setup.sh installs it).
   * Default 'sqlite'.
   */
  metadata?: MetadataBackend;
  /** Progress messages. Default: write to stderr. Pass () => {} to silence. */
  log?: (message: string) => void;
}

export interface SupersetTimings {
  setupMs: number;
  initMs: number;
  serveMs: number;
  totalMs: number;
}

export interface SupersetInstance {
  baseUrl: string;
  version: string;
  host: string;
  port: number;
  username: string;
  password: string;
  dataDir: string;
  logFile: string;
  configFile: string;
  /** pid of the server's process-group leader (gunicorn master). */
  pid: number;
  /** true when this start ran db upgrade/init/create-admin (or seeded from the template). */
  initialized: boolean;
  metadataBackend: MetadataBackend;
  /** postgres://… of the metadata database when metadataBackend is 'postgresql'. */
  metadataUrl?: string;
  timings: SupersetTimings;
  /** Resident memory of the server's whole process group in MiB (Linux /proc; 0 elsewhere). */
  memoryMb(): number;
  /** Run a `superset` CLI command against this instance's config, e.g. ['fab', 'list-users']. */
  cli(args: string[]): Promise<string>;
  /** Kill the whole server process group (SIGQUIT, then SIGKILL after 10 s). Idempotent. */
  stop(): Promise<void>;
}

interface InstanceState {
  version: string;
  /** Absent in states written before PostgreSQL metadata existed: SQLite. */
  metadata?: MetadataBackend;
  username: string;
  password: string;
  createdAt: string;
}

export function toolsDir(version: string): string {
  return join(process.env.SUPERSET_TOOLS_DIR ?? join(REPO_ROOT, '.tools/superset'), version);
}

export function venvBin(version: string): string {
  return join(toolsDir(version), 'venv/bin');
}

/**
 * The venv's interpreter. Console scripts are run through it rather than by their shebang, which
 * names the path the venv was created at: a venv made in another checkout and shared since would
 * otherwise fail to start (ENOENT).
 */
function venvPython(version: string): string {
  return join(venvBin(version), 'python');
}

/** Run scripts/superset/setup.sh for the given versions (cached; ~10 ms when already installed). */
export async function ensureSuperset(versions: string[], log: (m: string) => void = defaultLog): Promise<void> {
  const out: Buffer[] = [];
  const child = spawn('bash', [SETUP_SCRIPT, ...versions], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => {
    out.push(b);
    for (const line of b.toString().split('\n')) if (line.trim()) log(line);
  });
  const code = await exitCode(child);
  if (code !== 0) {
    throw new Error(
      `scripts/superset/setup.sh ${versions.join(' ')} failed (exit ${code}):\n${Buffer.concat(out).toString().slice(-4000)}`,
    );
  }
}

export async function startSuperset(options: StartSupersetOptions): Promise<SupersetInstance> {
  const t0 = Date.now();
  const log = options.log ?? defaultLog;
  const version = options.version;
  const dataDir = resolve(options.dataDir);
  const username = options.adminUsername ?? DEFAULT_USERNAME;
  const password = options.adminPassword ?? DEFAULT_PASSWORD;
  const host = '127.0.0.1';
  const metadata: MetadataBackend = options.metadata ?? 'sqlite';

  await ensureSuperset([version], log);
  const tSetup = Date.now();

  if (options.fresh) wipeDataDir(dataDir);
  mkdirSync(dataDir, { recursive: true });
  assertNotRunning(dataDir);

  const statePath = join(dataDir, STATE_FILE);
  let state = readState(statePath);
  if (state && state.version !== version) {
    throw new Error(`${dataDir} was initialised by Superset ${state.version}, not ${version}. Use another dataDir or fresh: true.`);
  }
  if (state && (state.metadata ?? 'sqlite') !== metadata) {
    throw new Error(`${dataDir} keeps its metadata in ${state.metadata ?? 'sqlite'}, not ${metadata}. Use another dataDir or fresh: true.`);
  }

  const template = join(toolsDir(version), 'template');
  let pg: Awaited<ReturnType<typeof startMetadataPostgres>> | undefined;
  if (metadata === 'postgresql') {
    pg = await startMetadataPostgres({
      dataDir,
      templateDir: options.useTemplate === false ? undefined : template,
      repoRoot: REPO_ROOT,
      version,
      username,
      password,
      existing: state !== undefined,
    });
  }
  let metadataDb: MetadataPostgres | undefined = pg?.metadata;
  // Everything below may throw: the metadata cluster must not outlive a failed start.
  let cli: (args: string[]) => Promise<string>;
  let configFile: string;
  let initialized = false;
  let server: RunningServer | undefined;
  let port: number;
  let tInit: number;
  const logFile = join(dataDir, 'server.log');
  try {
    configFile = join(dataDir, 'superset_config.py');
    writeFileSync(configFile, renderConfig(dataDir, readOrCreateSecret(dataDir), options, metadataDb?.sqlalchemyUrl));
    const env = buildEnv(version, dataDir, configFile, options.env);
    const initLog = join(dataDir, 'init.log');
    cli = (args: string[]): Promise<string> => runCli(version, args, env, dataDir, initLog);

    // ---- one-time initialisation (cached by instance.json) ----
    if (!state) {
      initialized = true;
      rmSync(join(dataDir, 'superset.db'), { force: true }); // a half-initialised DB from a crashed run
      const templateDb = join(template, 'superset.db');
      const templateMeta = readState(join(template, STATE_FILE));
      // The template is a copy of a freshly initialised metadata DB (roles, permissions, one admin),
      // taken before the first serve; used only for the same admin credentials.
      const templateFits = templateMeta?.username === username && templateMeta.password === password;
      if (pg?.seeded) {
        log(`superset ${version}: PostgreSQL metadata in ${pg.clusterDir}, seeded from template`);
      } else if (pg) {
        log(`superset ${version}: initialising PostgreSQL metadata in ${pg.clusterDir} (db upgrade, init, create-admin)`);
        await cli(['db', 'upgrade']);
        await cli(['init']);
        await setAdmin(cli, username, password);
        if (options.useTemplate !== false) {
          metadataDb = await savePostgresTemplate({
            ...pg,
            metadata: pg.metadata,
            templateDir: template,
            repoRoot: REPO_ROOT,
            version,
            username,
            password,
          });
        }
      } else if (options.useTemplate !== false && templateFits && existsSync(templateDb)) {
        log(`superset ${version}: seeding ${dataDir} from template`);
        copyFileSync(templateDb, join(dataDir, 'superset.db'));
      } else {
        log(`superset ${version}: initialising metadata DB in ${dataDir} (db upgrade, init, create-admin)`);
        await cli(['db', 'upgrade']);
        await cli(['init']);
        await setAdmin(cli, username, password);
        if (options.useTemplate !== false && !templateMeta) saveTemplate(dataDir, template, version, username, password);
      }
      state = { version, metadata, username, password, createdAt: new Date().toISOString() };
      writeFileSync(statePath, JSON.stringify(state, null, 2) + '\n');
    } else if (state.username !== username || state.password !== password) {
      await setAdmin(cli, username, password);
      state = { ...state, username, password };
      writeFileSync(statePath, JSON.stringify(state, null, 2) + '\n');
    }
    tInit = Date.now();

    // ---- serve ----
    port = options.port ?? (await freePort(host));
    if (options.port !== undefined && !(await portIsFree(host, port))) {
      throw new Error(`port ${port} on ${host} is already in use`);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        server = await serve(version, env, dataDir, host, port, logFile, options);
        break;
      } catch (err) {
        // Lost a race for an auto-picked port: pick another.
        if (options.port === undefined && attempt < 3 && err instanceof PortInUseError) {
          port = await freePort(host);
          continue;
        }
        throw err;
      }
    }
  } catch (err) {
    await metadataDb?.stop();
    throw err;
  }
  const baseUrl = `http://${host}:${port}`;
  log(`superset ${version}: serving on ${baseUrl} (log: ${logFile})`);
  const tServe = Date.now();
  const srv = server;
  return {
    baseUrl,
    version,
    host,
    port,
    username,
    password,
    dataDir,
    logFile,
    configFile,
    pid: srv.child.pid ?? -1,
    initialized,
    metadataBackend: metadata,
    metadataUrl: metadataDb?.url,
    timings: { setupMs: tSetup - t0, initMs: tInit - tSetup, serveMs: tServe - tInit, totalMs: tServe - t0 },
    cli,
    memoryMb: () => processGroupRssMb(srv.child.pid ?? -1),
    stop: async () => {
      await srv.stop();
      await metadataDb?.stop();
    },
  };
}

// ------------------------------------------------------------------------------------------------

function defaultLog(message: string): void {
  process.stderr.write(`${message}\n`);
}

function renderConfig(dataDir: string, secret: string, options: StartSupersetOptions, postgresUrl?: string): string {
  const py = (s: string): string => JSON.stringify(s); // a JSON string is a valid Python str literal
  const flags: Record<string, boolean> = {
    ENABLE_TEMPLATE_PROCESSING: true,
    THUMBNAILS: false,
    ALERT_REPORTS: false,
    TAGGING_SYSTEM: false,
    ...options.featureFlags,
  };
  const flagLines = Object.entries(flags)
    .map(([k, v]) => `    ${py(k)}: ${v ? 'True' : 'False'},`)
    .join('\n');
  const dbPath = join(dataDir, 'superset.db');
  const metadataDb = postgresUrl
    ? `SQLALCHEMY_DATABASE_URI = ${py(postgresUrl)}
SQLALCHEMY_ENGINE_OPTIONS = {"pool_pre_ping": True, "connect_args": {"connect_timeout": 10}}`
    : `SQLALCHEMY_DATABASE_URI = ${py(`sqlite:///${dbPath}?check_same_thread=false`)}
# Wait for SQLite locks instead of failing with "database is locked" under gunicorn threads.
SQLALCHEMY_ENGINE_OPTIONS = {"connect_args": {"timeout": 30}}`;
  return `# Generated by test/support/superset/instance.ts on every start. Do not edit.
DATA_DIR = ${py(dataDir)}
SECRET_KEY = ${py(secret)}
${metadataDb}
SQLALCHEMY_EXAMPLES_URI = ${py(`sqlite:///${join(dataDir, 'examples.db')}?check_same_thread=false`)}

# CSRF on, as in production: mutating API calls need X-CSRFToken + session cookie + Referer.
WTF_CSRF_ENABLED = True
FAB_ADD_SECURITY_API = True        # /api/v1/security/users/ and roles (fixtures create users)
AUTH_RATE_LIMITED = False
RATELIMIT_ENABLED = False
TALISMAN_ENABLED = False
CONTENT_SECURITY_POLICY_WARNING = False
# Allow sqlite:// data sources (fixture databases) and their import.
PREVENT_UNSAFE_DB_CONNECTIONS = False
PREVENT_UNSAFE_DEFAULT_URLS_ON_DATASET = False

FEATURE_FLAGS = {
${flagLines}
}

CACHE_CONFIG = {"CACHE_TYPE": "NullCache"}
DATA_CACHE_CONFIG = {"CACHE_TYPE": "NullCache"}
THUMBNAIL_CACHE_CONFIG = {"CACHE_TYPE": "NullCache"}


class CeleryConfig:  # never used: no worker runs; keeps any sqlite broker file inside DATA_DIR
    broker_url = ${py(`sqla+sqlite:///${join(dataDir, 'celerydb.sqlite')}`)}
    result_backend = ${py(`db+sqlite:///${join(dataDir, 'celery_results.sqlite')}`)}
    beat_schedule = {}


CELERY_CONFIG = CeleryConfig
SUPERSET_WEBSERVER_TIMEOUT = 300

# WTForms 3.3 passes extra_filters to Field.process, which the pinned WTForms-JSON 0.3.4 wrapper
# refuses: every form POST (the login page, which the browser check signs in through) would
# answer 500. Its wrapper is wrapped once more to accept the argument before Superset applies it.
try:
    import wtforms_json as _wtforms_json

    _wrap_process = _wtforms_json.monkey_patch_field_process

    def _accepting_extra_filters(func):
        inner = _wrap_process(func)

        def process(self, formdata, data=_wtforms_json._unset_value, extra_filters=None):
            return inner(self, formdata, data=data)

        return process

    _wtforms_json.monkey_patch_field_process = _accepting_extra_filters
except ImportError:
    pass
LOG_LEVEL = "INFO"

${options.extraConfig ?? ''}
`;
}

function readOrCreateSecret(dataDir: string): string {
  const path = join(dataDir, '.secret_key');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(path, secret + '\n', { mode: 0o600 });
  return secret;
}

export function buildEnv(version: string, dataDir: string, configFile: string, extra?: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'SUPERSET_SECRET_KEY', 'FLASK_DEBUG', 'SUPERSET_ENV']) delete env[k];
  return {
    ...env,
    PATH: `${venvBin(version)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    VIRTUAL_ENV: dirname(venvBin(version)),
    SUPERSET_CONFIG_PATH: configFile,
    SUPERSET_HOME: dataDir,
    FLASK_APP: 'superset',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    ...extra,
  };
}

function readState(path: string): InstanceState | undefined {
  try {
    const s = JSON.parse(readFileSync(path, 'utf8')) as InstanceState;
    return typeof s.version === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

function wipeDataDir(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  const entries = readdirSync(dataDir);
  const ours = entries.length === 0 || entries.includes(STATE_FILE) || entries.includes('superset_config.py');
  if (!ours || dataDir === REPO_ROOT || dataDir === '/') {
    throw new Error(`refusing to wipe ${dataDir}: it does not look like a Superset test data dir`);
  }
  assertNotRunning(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}

function assertNotRunning(dataDir: string): void {
  const pidFile = join(dataDir, 'server.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (pid > 0 && isAlive(pid)) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      cmd = 'gunicorn'; // no /proc: assume it is ours
    }
    if (cmd.includes('gunicorn') || cmd.includes('superset')) {
      throw new Error(`a Superset server (pid ${pid}) is already running on ${dataDir}; stop it first (kill -- -${pid})`);
    }
  }
  rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function setAdmin(cli: (args: string[]) => Promise<string>, username: string, password: string): Promise<void> {
  const out = await cli([
    'fab',
    'create-admin',
    '--username',
    username,
    '--firstname',
    'Ada',
    '--lastname',
    'Admin',
    '--email',
    `${username}@example.com`,
    '--password',
    password,
  ]);
  if (/already exists/i.test(out)) {
    await cli(['fab', 'reset-password', '--username', username, '--password', password]);
  } else if (!/created/i.test(out)) {
    throw new Error(`superset fab create-admin did not create ${username}:\n${out.slice(-2000)}`);
  }
}

function saveTemplate(dataDir: string, template: string, version: string, username: string, password: string): void {
  try {
    mkdirSync(template, { recursive: true });
    const tmp = join(template, `superset.db.${process.pid}.tmp`);
    copyFileSync(join(dataDir, 'superset.db'), tmp);
    renameSync(tmp, join(template, 'superset.db'));
    const meta: InstanceState = { version, username, password, createdAt: new Date().toISOString() };
    writeFileSync(join(template, STATE_FILE), JSON.stringify(meta, null, 2) + '\n');
  } catch {
    // The template is only an optimisation.
  }
}

async function runCli(version: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, logFile: string): Promise<string> {
  const started = Date.now();
  const chunks: Buffer[] = [];
  const child = spawn(venvPython(version), [join(venvBin(version), 'superset'), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  child.stderr.on('data', (b: Buffer) => chunks.push(b));
  const code = await exitCode(child);
  const out = Buffer.concat(chunks).toString();
  const shown = args.map((a, i) => (args[i - 1] === '--password' ? '***' : a)).join(' ');
  const header = `\n===== superset ${shown} (exit ${code}, ${Date.now() - started} ms) =====\n`;
  writeFileSync(logFile, header + out, { flag: 'a' });
  if (code !== 0) {
    throw new Error(`superset ${shown} failed with exit ${code} (log: ${logFile}):\n${out.slice(-3000)}`);
  }
  return out;
}

function exitCode(child: ChildProcess): Promise<number> {
  return new Promise((res, rej) => {
    child.once('error', rej);
    child.once('close', (code, signal) => res(code ?? (signal ? 128 : 1)));
  });
}

// ------------------------------------------------------------------------------------------------

class PortInUseError extends Error {}

interface RunningServer {
  child: ChildProcess;
  stop(): Promise<void>;
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort if the caller never calls stop(): kill servers when this Node process exits.
  process.on('exit', () => {
    for (const pgid of liveGroups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

async function serve(
  version: string,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  host: string,
  port: number,
  logFile: string,
  options: StartSupersetOptions,
): Promise<RunningServer> {
  const logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
  const fd = openSync(logFile, 'a');
  writeFileSync(fd, `\n===== ${new Date().toISOString()} starting superset ${version} on ${host}:${port} =====\n`);
  const args = [
    '--bind',
    `${host}:${port}`,
    '--workers',
    String(options.workers ?? 1),
    '--worker-class',
    'gthread',
    '--threads',
    String(options.threads ?? 8),
    '--timeout',
    '300',
    '--graceful-timeout',
    '5',
    // Longer than any client's idle keep-alive: gunicorn's default of 2 s closes sockets that
    // fetch is about to reuse ("other side closed").
    '--keep-alive',
    '75',
    '--access-logfile',
    '-',
    '--error-logfile',
    '-',
    // gunicorn >= 24 opens a control socket at ~/.gunicorn/gunicorn.ctl by default, shared by
    // every instance on the machine: turn it off.
    ...(gunicornHasControlSocket(version) ? ['--no-control-socket'] : []),
    'superset.app:create_app()',
  ];
  const child = spawn(venvPython(version), [join(venvBin(version), 'gunicorn'), ...args], {
    cwd: dataDir,
    env,
    detached: true, // own process group: stop() kills gunicorn and its workers together
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const pgid = child.pid;
  if (pgid === undefined) {
    const why = await exitCode(child).then(
      (c) => `exit ${String(c)}`,
      (e: unknown) => String(e),
    );
    throw new Error(`could not spawn gunicorn for superset ${version} (${why})`);
  }
  installExitHook();
  liveGroups.add(pgid);
  writeFileSync(join(dataDir, 'server.pid'), `${pgid}\n`);

  let exited = false;
  const exitPromise = new Promise<void>((res) => {
    child.once('exit', () => {
      exited = true;
      liveGroups.delete(pgid);
      res();
    });
  });

  const stop = async (): Promise<void> => {
    if (!exited) {
      // SIGQUIT = gunicorn's quick shutdown (SIGTERM waits for the graceful timeout, ~3 s).
      killGroup(pgid, 'SIGQUIT');
      if (!(await within(exitPromise, 10_000))) {
        killGroup(pgid, 'SIGKILL');
        await within(exitPromise, 5_000);
      }
    }
    killGroup(pgid, 'SIGKILL'); // stragglers in the group (workers) after the master is gone
    liveGroups.delete(pgid);
    rmSync(join(dataDir, 'server.pid'), { force: true });
  };

  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  const deadline = Date.now() + timeoutMs;
  const url = `http://${host}:${port}/health`;
  while (true) {
    if (exited) {
      const tail = readLogTail(logFile, logOffset);
      await stop();
      if (/Address already in use|Connection in use/i.test(tail)) throw new PortInUseError(`port ${port} in use`);
      throw new Error(`superset ${version} exited before it was ready (log: ${logFile}):\n${tail}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `superset ${version} did not answer ${url} within ${timeoutMs / 1000}s (log: ${logFile}):\n${readLogTail(logFile, logOffset)}`,
      );
    }
    try {
      // The master accepts connections before the worker has booted: bound the wait by the deadline.
      const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(100, Math.min(5_000, deadline - Date.now()))) });
      const body = await res.text();
      if (res.ok && body.trim() === 'OK') break;
    } catch {
      // not listening yet
    }
    await sleep(300);
  }
  return { child, stop };
}

function gunicornHasControlSocket(version: string): boolean {
  const lib = join(dirname(venvBin(version)), 'lib');
  try {
    for (const py of readdirSync(lib)) {
      const cfg = join(lib, py, 'site-packages/gunicorn/config.py');
      if (existsSync(cfg)) return readFileSync(cfg, 'utf8').includes('no-control-socket');
    }
  } catch {
    // fall through
  }
  return false;
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // group already gone
  }
}

function readLogTail(logFile: string, from: number, max = 4000): string {
  try {
    const text = readFileSync(logFile).subarray(from).toString();
    return text.slice(-max);
  } catch {
    return '(no log)';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

/** Resolve true if promise settles within ms, false otherwise; never leaves a timer behind. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((res) => {
    timer = setTimeout(() => res(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** RSS of every process in a process group, in MiB (Linux /proc). */
export function processGroupRssMb(pgid: number): number {
  let kb = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue; // pgrp is the 5th field of /proc/PID/stat
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process went away
    }
  }
  return Math.round(kb / 1024);
}

function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(false));
    srv.listen(port, host, () => srv.close(() => res(true)));
  });
}
