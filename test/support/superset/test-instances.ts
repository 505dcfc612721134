// The real Superset instances of a test run, started by test/global-setup.ts in parallel with
// PostgreSQL and Temporal, each with its own metadata database and port:
//   a: 6.1.0 (a source), b: 6.1.0 (a target), c: 6.0.0 (an older target for cross-version tests),
//   d: 6.1.0 (a target keeping its metadata in PostgreSQL, as production deployments do)
// a, b and c keep their metadata in SQLite, seeded from the cached template metadata DB
// (.tools/superset/<v>/template), so they start in seconds after the first run; d gets a PostgreSQL
// cluster of its own, seeded from .tools/superset/<v>/template/postgres in the same way.
// SWITCHYARD_TEST_SUPERSET=off skips them (tests needing them skip).
import path from 'node:path';
import { ensureSuperset, startSuperset, type MetadataBackend, type SupersetInstance } from './instance.ts';

export interface TestSupersetInfo {
  name: string;
  version: string;
  baseUrl: string;
  username: string;
  password: string;
  /** The instance's data dir; fixture SQLite files may go under it. */
  dataDir: string;
  metadata: MetadataBackend;
  /** postgres://… of the metadata database, for instances that keep it in PostgreSQL. */
  metadataUrl?: string;
}

export type TestSupersetName = 'a' | 'b' | 'c' | 'd';
export type TestSupersets = Record<TestSupersetName, TestSupersetInfo>;

/** Which release and metadata backend each named instance runs. */
export type SupersetSpecs<N extends string = string> = Record<
  N,
  { version: string; metadata: MetadataBackend; featureFlags?: Record<string, boolean> }
>;

export const TEST_SUPERSETS: SupersetSpecs<TestSupersetName> = {
  a: { version: '6.1.0', metadata: 'sqlite' },
  // Without alerts and reports, as many deployments run: a migration into it reports that kind unavailable.
  b: { version: '6.1.0', metadata: 'sqlite', featureFlags: { ALERT_REPORTS: false } },
  c: { version: '6.0.0', metadata: 'sqlite' },
  // Same release as b, so a difference between b and d is the metadata backend's alone.
  d: { version: '6.1.0', metadata: 'postgresql' },
};

/**
 * The version matrix (`npm run test:matrix`): one instance per release people run, both metadata
 * backends represented (the default set already covers 6.1.0 on both and 6.0.0 on SQLite).
 * Besides the companion flags every instance gets, EMBEDDED_SUPERSET is on as in a deployment that
 * embeds dashboards (test/matrix/companions.matrix.test.ts migrates their embedded configs).
 */
export const MATRIX_SUPERSETS: SupersetSpecs = {
  '4.1.4': { version: '4.1.4', metadata: 'postgresql', featureFlags: { EMBEDDED_SUPERSET: true } },
  '5.0.0': { version: '5.0.0', metadata: 'sqlite', featureFlags: { EMBEDDED_SUPERSET: true } },
  '6.0.0': { version: '6.0.0', metadata: 'postgresql', featureFlags: { EMBEDDED_SUPERSET: true } },
  '6.1.0': { version: '6.1.0', metadata: 'sqlite', featureFlags: { EMBEDDED_SUPERSET: true } },
};

/**
 * Flags the companion assets of a migration need (every release from 4.1.4 on knows them; an
 * unknown flag is ignored by Superset): ALERT_REPORTS answers `/api/v1/report/` (404 without it),
 * DASHBOARD_RBAC makes a dashboard's roles grant access. TAGGING_SYSTEM stays off: the tag API
 * answers without it, and with it on every export would carry tags and every object its implicit
 * `type:`/`owner:` tags, changing the bundles other tests compare.
 */
export const COMPANION_FLAGS: Record<string, boolean> = { ALERT_REPORTS: true, DASHBOARD_RBAC: true };

interface Log {
  info(msg: string): void;
  warn(msg: string): void;
}

export async function startTestSupersets(runDir: string, log: Log): Promise<{ info: TestSupersets; stop(): Promise<void> } | null> {
  return startSupersets(TEST_SUPERSETS, runDir, log);
}

/**
 * SWITCHYARD_TEST_SUPERSETS=a,b starts only those instances, for a quick local run of files that
 * need no others (a file that reads a missing one fails on it). Refused under CI=true: CI runs all.
 */
function selectedInstances<N extends string>(all: N[], log: Log): N[] {
  const wanted = process.env.SWITCHYARD_TEST_SUPERSETS?.trim();
  if (!wanted) return all;
  if (/^(1|true)$/i.test(process.env.CI ?? '')) {
    throw new Error('SWITCHYARD_TEST_SUPERSETS is for local runs; under CI=true every instance starts');
  }
  const names = wanted.split(',').map((n) => n.trim());
  const unknown = names.filter((n) => !all.includes(n as N));
  if (unknown.length > 0) throw new Error(`SWITCHYARD_TEST_SUPERSETS names unknown instances: ${unknown.join(', ')}`);
  log.warn(`SWITCHYARD_TEST_SUPERSETS: starting only ${names.join(', ')}`);
  return names as N[];
}

/** Starts the named instances side by side (installing their releases first); null when SWITCHYARD_TEST_SUPERSET=off. */
export async function startSupersets<N extends string>(
  specs: SupersetSpecs<N>,
  runDir: string,
  log: Log,
): Promise<{ info: Record<N, TestSupersetInfo>; stop(): Promise<void> } | null> {
  if (/^(off|0|false|no)$/i.test(process.env.SWITCHYARD_TEST_SUPERSET ?? '')) {
    log.warn('SWITCHYARD_TEST_SUPERSET=off: no real Superset; the end-to-end tests against it are skipped');
    return null;
  }
  const started = Date.now();
  const quiet = (m: string) => log.info(m);
  const names = selectedInstances(Object.keys(specs) as N[], log);
  await ensureSuperset([...new Set(names.map((n) => specs[n].version))], quiet);
  const results = await Promise.allSettled(
    names.map((name) => {
      const { version, metadata, featureFlags } = specs[name];
      return startSuperset({
        version,
        dataDir: path.join(runDir, `superset-${name}`),
        fresh: true,
        useTemplate: true,
        metadata,
        featureFlags: { ...COMPANION_FLAGS, ...featureFlags },
        // Two single-threaded workers, not threads: Flask-AppBuilder's list endpoints keep their
        // filters on an object shared by a worker's threads, so concurrent list calls from
        // different test files could run with each other's filters (see lib/superset/client.ts).
        workers: 2,
        threads: 1,
        log: quiet,
      });
    }),
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
  const info = {} as Record<N, TestSupersetInfo>;
  names.forEach((name, i) => {
    const s = running[i];
    info[name] = {
      name,
      version: s.version,
      baseUrl: s.baseUrl,
      username: s.username,
      password: s.password,
      dataDir: s.dataDir,
      metadata: s.metadataBackend,
      metadataUrl: s.metadataUrl,
    };
  });
  const timings = names.map((n, i) => `${n}=${info[n].version}/${info[n].metadata}@${info[n].baseUrl} in ${running[i].timings.totalMs} ms`);
  log.warn(`superset ${timings.join(', ')}; all ready in ${Date.now() - started} ms`);
  return { info, stop };
}
