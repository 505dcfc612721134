// The real Superset instances of a test run, started by test/global-setup.ts in parallel with
// PostgreSQL and Temporal, each with its own metadata database and port:
//   a: 6.1.0 (a source), b: 6.1.0 (a target), c: 6.0.0 (an older target for cross-version tests)
// Seeded from the cached template metadata DB (.tools/superset/<v>/template), so a start costs
// seconds after the first run. SWITCHYARD_TEST_SUPERSET=off skips them (tests needing them skip).
import path from 'node:path';
import { ensureSuperset, startSuperset, type SupersetInstance } from './instance.ts';

export interface TestSupersetInfo {
  name: string;
  version: string;
  baseUrl: string;
  username: string;
  password: string;
  /** The instance's data dir; fixture SQLite files may go under it. */
  dataDir: string;
}

export type TestSupersets = Record<'a' | 'b' | 'c', TestSupersetInfo>;

export const TEST_SUPERSET_VERSIONS = { a: '6.1.0', b: '6.1.0', c: '6.0.0' } as const;

interface Log {
  info(msg: string): void;
  warn(msg: string): void;
}

export async function startTestSupersets(runDir: string, log: Log): Promise<{ info: TestSupersets; stop(): Promise<void> } | null> {
  if (/^(off|0|false|no)$/i.test(process.env.SWITCHYARD_TEST_SUPERSET ?? '')) {
    log.warn('SWITCHYARD_TEST_SUPERSET=off: no real Superset; the end-to-end tests against it are skipped');
    return null;
  }
  const started = Date.now();
  const quiet = (m: string) => log.info(m);
  await ensureSuperset([...new Set(Object.values(TEST_SUPERSET_VERSIONS))], quiet);
  const names = Object.keys(TEST_SUPERSET_VERSIONS) as Array<keyof TestSupersets>;
  const results = await Promise.allSettled(
    names.map((name) =>
      startSuperset({
        version: TEST_SUPERSET_VERSIONS[name],
        dataDir: path.join(runDir, `superset-${name}`),
        fresh: true,
        useTemplate: true,
        // Two single-threaded workers, not threads: Flask-AppBuilder's list endpoints keep their
        // filters on an object shared by a worker's threads, so concurrent list calls from
        // different test files could run with each other's filters (see lib/superset/client.ts).
        workers: 2,
        threads: 1,
        log: quiet,
      }),
    ),
  );
  const running = results.filter((r): r is PromiseFulfilledResult<SupersetInstance> => r.status === 'fulfilled').map((r) => r.value);
  const stop = async () => {
    await Promise.all(running.map((i) => i.stop()));
  };
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const info = {} as TestSupersets;
  names.forEach((name, i) => {
    const s = running[i];
    info[name] = { name, version: s.version, baseUrl: s.baseUrl, username: s.username, password: s.password, dataDir: s.dataDir };
  });
  log.warn(`superset ${names.map((n) => `${n}=${info[n].version}@${info[n].baseUrl}`).join(', ')} ready in ${Date.now() - started} ms`);
  return { info, stop };
}
