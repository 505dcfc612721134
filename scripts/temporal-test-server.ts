import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROJECT_ROOT } from '../lib/config.ts';
import { freePort } from '../lib/embedded/free-port.ts';

/**
 * Temporal's time-skipping test server, for the fast workflow tests (test/workflows/, docs/tests.md).
 * `TestWorkflowEnvironment.createTimeSkipping()` downloads its native build from a host this
 * machine cannot reach; the same server is published on Maven Central as
 * `io.temporal:temporal-test-server`, so this fetches it with Maven into `.tools/temporal-test-server/`
 * and writes a launcher, `temporal-test-server <port>` as the native build is called, that runs it
 * on the machine's Java. `node scripts/temporal-test-server.ts` installs it (a phase of .ci/run)
 * and prints the launcher's path; a second run finds it and returns at once.
 *
 * The SDK gives a server it starts 5 seconds to listen. A cold JVM takes about 1.7 s for this one
 * on a quiet 2-core machine, so the launcher starts it from a class-data archive made here
 * (AppCDS: 0.5 s) with the client compiler only: a busy machine has four times the margin.
 */
export const TEST_SERVER_VERSION = '1.38.0';
/** The test server writes through SLF4J: without a binding it warns on every start. */
const SLF4J_VERSION = '2.0.17';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MAIN_CLASS = 'io.temporal.testserver.TestServer';
/** Short-lived and small: the client compiler, one GC thread, a bounded heap. */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xmx512m'];

const rootDir = (toolsDir: string) => path.join(toolsDir, 'temporal-test-server');
export const testServerDir = (toolsDir = path.join(PROJECT_ROOT, '.tools')) => path.join(rootDir(toolsDir), TEST_SERVER_VERSION);
const launcherIn = (dir: string) => path.join(dir, 'temporal-test-server');
const markerIn = (dir: string) => path.join(dir, '.installed.json');

interface Marker {
  version: string;
  /** The Java the launcher runs and the archive was made by (another one ignores it): another Java, another setup. */
  javaPath: string;
  java: string;
  startupMs: number;
}

function which(cmd: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined; // expected: not on PATH, answered as missing
  }
}

/** The Java to run it on (JAVA, else `java` on PATH), by its real path: the archive is that JVM's. */
function javaBinary(): string {
  const java = process.env.JAVA || which('java');
  if (!java)
    throw new Error(
      'Java 17 or newer is needed for the Temporal test server (Debian: `apt-get install openjdk-17-jre-headless`), or set JAVA',
    );
  return fs.realpathSync(java);
}

/** `java -version`'s lines (it writes them to stderr). */
function javaVersion(java: string): string {
  return execFileSync('sh', ['-c', '"$0" -version 2>&1', java], { encoding: 'utf8' }).trim();
}

/** The launcher, when this version is installed for the Java found now; else undefined. */
export function installedTestServer(toolsDir?: string): string | undefined {
  const dir = testServerDir(toolsDir);
  try {
    const marker = JSON.parse(fs.readFileSync(markerIn(dir), 'utf8')) as Marker;
    const java = javaBinary();
    if (marker.version !== TEST_SERVER_VERSION || marker.javaPath !== java || marker.java !== javaVersion(java)) return undefined;
  } catch {
    return undefined; // expected: no marker (not installed) or no Java, answered as not installed
  }
  return fs.existsSync(launcherIn(dir)) ? launcherIn(dir) : undefined;
}

function pom(): string {
  const dep = (g: string, a: string, v: string) =>
    `<dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  return [
    '<project xmlns="http://maven.apache.org/POM/4.0.0">',
    '  <modelVersion>4.0.0</modelVersion>',
    '  <groupId>switchyard.tools</groupId><artifactId>temporal-test-server</artifactId><version>1</version><packaging>pom</packaging>',
    '  <dependencies>',
    `    ${dep('io.temporal', 'temporal-test-server', TEST_SERVER_VERSION)}`,
    `    ${dep('org.slf4j', 'slf4j-nop', SLF4J_VERSION)}`,
    '  </dependencies>',
    '</project>',
    '',
  ].join('\n');
}

/** The jars into `<staging>/lib` (Maven's own cache kept beside the versions, for the next version). */
function fetchJars(staging: string, toolsDir: string): void {
  const mvn = which('mvn');
  if (!mvn) throw new Error('Maven is needed to fetch the Temporal test server from Maven Central (Debian: `apt-get install maven`)');
  fs.writeFileSync(path.join(staging, 'pom.xml'), pom());
  const r = spawnSync(
    mvn,
    [
      '-B',
      '-q',
      '-Dstyle.color=never',
      `-Dmaven.repo.local=${path.join(rootDir(toolsDir), 'm2')}`,
      '-f',
      path.join(staging, 'pom.xml'),
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      `-DoutputDirectory=${path.join(staging, 'lib')}`,
      '-DincludeScope=runtime',
    ],
    // Maven's quiet mode still writes colour codes: its output is shown only when it fails.
    { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  if (r.status !== 0)
    throw new Error(`mvn could not fetch the Temporal test server (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}

/** The launcher: `temporal-test-server <port> [args]`, the native build's command line. */
function launcherScript(java: string): string {
  return [
    '#!/bin/sh',
    `# Temporal's time-skipping test server ${TEST_SERVER_VERSION} (Maven Central), written by scripts/temporal-test-server.ts.`,
    "# The class-data archive is this JVM's and this folder's: -Xshare:auto runs without it if either moved.",
    'here="$(cd "$(dirname "$0")" && pwd -P)"',
    `exec "${java}" -Xshare:auto -XX:SharedArchiveFile="$here/classes.jsa" -Xlog:disable -Xlog:all=error:stderr ${JVM_FLAGS.join(' ')} \\`,
    `  -cp "$here/lib/*" ${MAIN_CLASS} "$@"`,
    '',
  ].join('\n');
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false)); // not listening yet: asked again
  });
}

/**
 * Starts `argv` with a free port appended, waits until it listens (a bound for a hang: 60 s), stops
 * it with SIGTERM and waits for it to exit. Answers how long it took to listen.
 */
async function startOnce(argv: string[]): Promise<number> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn(argv[0]!, [...argv.slice(1), String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (await connects(port)) return Date.now() - started;
      if (child.exitCode !== null) throw new Error(`the test server exited with status ${child.exitCode} before listening`);
      if (Date.now() - started > 60_000) throw new Error('the test server did not listen within 60 s');
      await sleep(20);
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** Installs the pinned test server when missing (about 15 s cold); answers the launcher's path. */
export async function ensureTestServer(opts: { toolsDir?: string; log?: (m: string) => void } = {}): Promise<string> {
  const toolsDir = opts.toolsDir ?? path.join(PROJECT_ROOT, '.tools');
  const log = opts.log ?? ((m: string) => console.error(m));
  const found = installedTestServer(toolsDir);
  if (found) return found;
  const java = javaBinary();
  const dir = testServerDir(toolsDir);
  const staging = `${dir}.building-${process.pid}`;
  log(`fetching the Temporal test server ${TEST_SERVER_VERSION} from Maven Central...`);
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  try {
    fetchJars(staging, toolsDir);
    fs.writeFileSync(launcherIn(staging), launcherScript(java), { mode: 0o755 });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(staging, dir);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  // Made in place: the archive records the class path it was made with, which must be the launcher's.
  const classPath = path.join(dir, 'lib', '*');
  await startOnce([
    java,
    `-XX:ArchiveClassesAtExit=${path.join(dir, 'classes.jsa')}`,
    '-Xlog:disable',
    ...JVM_FLAGS,
    '-cp',
    classPath,
    MAIN_CLASS,
  ]);
  const startupMs = await startOnce([launcherIn(dir)]);
  const marker: Marker = { version: TEST_SERVER_VERSION, javaPath: java, java: javaVersion(java), startupMs };
  fs.writeFileSync(markerIn(dir), `${JSON.stringify(marker, null, 2)}\n`);
  log(`Temporal test server ${TEST_SERVER_VERSION} ready at ${launcherIn(dir)} (listening ${startupMs} ms after its start)`);
  return launcherIn(dir);
}

if (import.meta.main) {
  console.log(await ensureTestServer());
}
