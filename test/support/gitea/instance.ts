// A real Gitea for the git tests: built once by scripts/gitea/setup.sh (cached under
// .tools/gitea/<version>/), started per test run with its own SQLite database, work path and
// loopback port. Gitea refuses to run as root, so as root it runs as `nobody` through setpriv,
// with the binary and its assets copied to a folder that user can read.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../superset/instance.ts';
import { freePort } from '../../../lib/embedded/free-port.ts';

export const GITEA_VERSION = process.env.GITEA_VERSION ?? '1.24.6';

export interface GiteaInfo {
  version: string;
  baseUrl: string;
  username: string;
  password: string;
  /** A token with repository and user scopes, made for the admin user. */
  token: string;
  workDir: string;
}

interface Log {
  info(msg: string): void;
  warn(msg: string): void;
}

const NOBODY = 65534;

function toolDir(): string {
  return path.join(process.env.GITEA_TOOLS_DIR ?? path.join(REPO_ROOT, '.tools/gitea'), GITEA_VERSION);
}

/** Builds Gitea when the cache lacks it (minutes the first time, nothing afterwards). */
export function ensureGitea(log: Log): string {
  const dir = toolDir();
  if (!fs.existsSync(path.join(dir, '.installed'))) {
    log.warn(`building Gitea ${GITEA_VERSION} (scripts/gitea/setup.sh; cached afterwards)`);
    const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/gitea/setup.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`scripts/gitea/setup.sh failed (exit ${r.status})`);
  }
  return dir;
}

/** A copy of the build that an unprivileged user can read (the checkout may live under a private home). */
function readableCopy(dir: string): string {
  const dest = `/var/lib/switchyard-gitea-tools/${GITEA_VERSION}`;
  const stamp = fs.readFileSync(path.join(dir, '.installed'), 'utf8');
  if (fs.existsSync(path.join(dest, '.installed')) && fs.readFileSync(path.join(dest, '.installed'), 'utf8') === stamp) return dest;
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  fs.cpSync(dir, dest, { recursive: true });
  spawnSync('chmod', ['-R', 'a+rX', '/var/lib/switchyard-gitea-tools']);
  return dest;
}

function run(cmd: string[], env: NodeJS.ProcessEnv, asNobody: boolean): { status: number | null; out: string } {
  const argv = asNobody ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...cmd] : cmd;
  const r = spawnSync(argv[0], argv.slice(1), { env, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

export async function startGitea(log: Log): Promise<{ info: GiteaInfo; stop(): Promise<void> } | null> {
  if (/^(off|0|false|no)$/i.test(process.env.SWITCHYARD_TEST_GITEA ?? '')) {
    log.warn('SWITCHYARD_TEST_GITEA=off: no real Gitea; the git tests against it are skipped');
    return null;
  }
  const started = Date.now();
  const asRoot = process.getuid?.() === 0;
  let tools = ensureGitea(log);
  if (asRoot) tools = readableCopy(tools);
  const workDir = asRoot
    ? `/var/lib/switchyard-gitea-${randomBytes(4).toString('hex')}`
    : fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'switchyard-gitea-'));
  fs.mkdirSync(path.join(workDir, 'custom/conf'), { recursive: true });
  for (const d of ['options', 'templates']) fs.symlinkSync(path.join(tools, d), path.join(workDir, d));
  // The HTTP port is chosen right before the server starts (and again when something took it).
  const ini = (port: number) =>
    [
      'APP_NAME = switchyard-test',
      'RUN_MODE = prod',
      '[server]',
      'HTTP_ADDR = 127.0.0.1',
      `HTTP_PORT = ${port}`,
      `ROOT_URL = http://127.0.0.1:${port}/`,
      'DISABLE_SSH = true',
      'OFFLINE_MODE = true',
      'LFS_START_SERVER = false',
      '[database]',
      'DB_TYPE = sqlite3',
      `PATH = ${workDir}/data/gitea.db`,
      // Every git test file shares this Gitea: with SQLite's default 500 ms busy timeout a push's hook
      // could not write its branch under the full run's load (the branch then missing from Gitea's
      // table, a pull request from it 404). WAL lets readers go on beside the writer; the wait is long.
      'SQLITE_JOURNAL_MODE = WAL',
      'SQLITE_TIMEOUT = 60000',
      '[repository]',
      `ROOT = ${workDir}/repos`,
      'DEFAULT_BRANCH = main',
      '[security]',
      'INSTALL_LOCK = true',
      `SECRET_KEY = ${randomBytes(24).toString('hex')}`,
      `INTERNAL_TOKEN = ${randomBytes(48).toString('base64url')}`,
      'PASSWORD_HASH_ALGO = pbkdf2_hi',
      '[service]',
      'DISABLE_REGISTRATION = true',
      '[oauth2]',
      'ENABLED = false',
      '[cron]',
      'ENABLED = false',
      // Webhooks are delivered to the tests' Switchyard on 127.0.0.1 (Gitea refuses loopback by default).
      '[webhook]',
      'ALLOWED_HOST_LIST = loopback',
      'DELIVER_TIMEOUT = 30',
      // A repository stays flagged empty (its branches null, a pull request from it 404) until the
      // push_update queue has handled its first push; the default single worker on two cores let that
      // lag for minutes under the full run. In memory and four workers: the tests' Gitea is throwaway.
      '[queue]',
      'TYPE = channel',
      'MAX_WORKERS = 4',
      '[indexer]',
      'REPO_INDEXER_ENABLED = false',
      '[log]',
      'MODE = file',
      'LEVEL = Warn',
      `ROOT_PATH = ${workDir}/log`,
      '',
    ].join('\n');
  const config = path.join(workDir, 'custom/conf/app.ini');
  fs.writeFileSync(config, ini(await freePort()));
  if (asRoot) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, workDir]);
  const env = { PATH: process.env.PATH, HOME: workDir, GITEA_WORK_DIR: workDir, USER: asRoot ? 'nobody' : process.env.USER };
  const bin = path.join(tools, 'gitea');
  const cleanup = () => fs.rmSync(workDir, { recursive: true, force: true });

  const migrate = run([bin, '--config', config, '--work-path', workDir, 'migrate'], env, asRoot);
  if (migrate.status !== 0) {
    cleanup();
    throw new Error(`gitea migrate failed: ${migrate.out.slice(-2000)}`);
  }
  const username = 'switchyard';
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = run(
    [
      bin,
      '--config',
      config,
      '--work-path',
      workDir,
      'admin',
      'user',
      'create',
      '--username',
      username,
      '--password',
      password,
      '--email',
      'switchyard@example.com',
      '--admin',
      '--must-change-password=false',
    ],
    env,
    asRoot,
  );
  if (user.status !== 0) {
    cleanup();
    throw new Error(`gitea admin user create failed: ${user.out.slice(-2000)}`);
  }

  let server: { baseUrl: string; stop(): Promise<void> } | undefined;
  for (let attempt = 1; !server; attempt++) {
    const port = await freePort();
    fs.writeFileSync(config, ini(port));
    try {
      server = await serve(bin, config, workDir, env, asRoot, `http://127.0.0.1:${port}`);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= 4) {
        cleanup();
        throw err;
      }
    }
  }
  const { baseUrl } = server;
  const stop = async () => {
    await server.stop();
    cleanup();
  };
  const token = await createToken(baseUrl, username, password, 'switchyard-tests');
  log.warn(`gitea ${GITEA_VERSION} ready at ${baseUrl} in ${Date.now() - started} ms`);
  return { info: { version: GITEA_VERSION, baseUrl, username, password, token, workDir }, stop };
}

class PortTakenError extends Error {}

/** What the file gained past offset (bytes), at most its last 2000 characters. */
function logSince(file: string, offset: number): string {
  try {
    return fs.readFileSync(file).subarray(offset).toString('utf8').slice(-2000);
  } catch {
    return '';
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Starts `gitea web` and waits until it answers; the caller cleans the work folder on failure. */
async function serve(
  bin: string,
  config: string,
  workDir: string,
  env: NodeJS.ProcessEnv,
  asRoot: boolean,
  baseUrl: string,
): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const argv = [bin, '--config', config, '--work-path', workDir, 'web'];
  const logFile = path.join(workDir, 'log/gitea.log');
  const logStart = sizeOf(logFile);
  const full = asRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv] : argv;
  const child: ChildProcess = spawn(full[0], full.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((r) => {
        const t = setTimeout(() => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // gone
          }
          r(undefined);
        }, 5000);
        child.once('exit', () => {
          clearTimeout(t);
          r(undefined);
        });
      });
    }
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      // With MODE = file its own log, not stderr, may hold the reason.
      const said = `${stderr}\n${logSince(logFile, logStart)}`.trim();
      const message = `gitea exited at start (${child.exitCode}): ${said}`;
      throw /address already in use/i.test(said) ? new PortTakenError(message) : new Error(message);
    }
    // Gitea logs a port it cannot bind and keeps running without serving: stop it and say so.
    const logged = logSince(logFile, logStart);
    if (/Failed to start server:[^\n]*address already in use/i.test(logged)) {
      await stop();
      throw new PortTakenError(`gitea could not listen on ${baseUrl}: ${logged.slice(-500)}`);
    }
    try {
      const r = await fetch(`${baseUrl}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return { baseUrl, stop };
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`gitea did not answer within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function createToken(
  baseUrl: string,
  username: string,
  password: string,
  name: string,
  scopes = ['write:repository', 'write:issue', 'write:user', 'read:organization'],
): Promise<string> {
  const r = await fetch(`${baseUrl}/api/v1/users/${username}/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
    body: JSON.stringify({ name, scopes }),
  });
  if (r.status !== 201) throw new Error(`gitea token: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { sha1: string }).sha1;
}
