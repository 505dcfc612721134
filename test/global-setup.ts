import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../lib/embedded/postgres.ts';
import { createLogger } from '../lib/logger.ts';
import { ensureTemporalCli } from '../lib/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../lib/embedded/temporal-dev-server.ts';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../worker/create-worker.ts';
import { startSupersets, TEST_SUPERSETS, type SupersetSpecs, type TestSupersets } from './support/superset/test-instances.ts';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes.ts';
import { startGitea, type GiteaInfo } from './support/gitea/instance.ts';
import { refuseSkipSwitchesInCi } from './support/ci.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    temporalAddress: string;
    workflowBundlePath: string;
    runDir: string;
    /** Real Superset instances (a, b: 6.1.0; c: 6.0.0; d: 6.1.0 with PostgreSQL metadata); null when SWITCHYARD_TEST_SUPERSET=off. */
    supersets: TestSupersets | null;
    /** A real Gitea (git tests); null when SWITCHYARD_TEST_GITEA=off. */
    gitea: GiteaInfo | null;
  }
}

/**
 * One real PostgreSQL and one real Temporal dev server for the whole run; each test file gets
 * its own database and task queue. The workflow bundle is built once (this also proves the
 * workflow code imports nothing the sandbox forbids).
 */
export default function setup(project: TestProject) {
  return setupWith(project, TEST_SUPERSETS);
}

/** The same infrastructure with another set of Superset instances (the version matrix starts one per release). */
export async function setupWith(project: TestProject, specs: SupersetSpecs) {
  refuseSkipSwitchesInCi(); // before anything starts: under CI=true no test may be switched off
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'warn', 'test-setup');
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-test-'));
  fs.chmodSync(runDir, 0o755);
  const started = Date.now();

  const supersetsStarting = startSupersets(specs, runDir, logger);
  supersetsStarting.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  const giteaStarting = startGitea(logger);
  giteaStarting.catch(() => undefined);
  const infra = Promise.all([
    startEmbeddedPostgres({ dataDir: path.join(runDir, 'postgres'), logger }),
    startTemporalDevServer({
      cli: ensureTemporalCli({ explicit: process.env.TEMPORAL_CLI || undefined }),
      logFile: path.join(runDir, 'temporal.log'),
      searchAttributes: SEARCH_ATTRIBUTES,
    }),
    bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => logger.error(m) },
    }),
  ]);
  const [pg, temporal, bundle] = await infra.catch(async (err: unknown) => {
    await supersetsStarting.then(
      (s) => s?.stop(),
      () => undefined,
    );
    await giteaStarting.then(
      (g) => g?.stop(),
      () => undefined,
    );
    throw err;
  });
  const supersets = await supersetsStarting.catch(async (err: unknown) => {
    await giteaStarting.then(
      (g) => g?.stop(),
      () => undefined,
    );
    await temporal.stop();
    await pg.stop();
    throw err;
  });
  const gitea = await giteaStarting.catch(async (err: unknown) => {
    await supersets?.stop();
    await temporal.stop();
    await pg.stop();
    throw err;
  });
  const bundlePath = path.join(runDir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, bundle.code);
  logger.warn(
    `test infrastructure ready in ${Date.now() - started} ms (postgres ${pg.url.replace(/:[^:@]*@/, ':***@')}, temporal ${temporal.address})`,
  );

  project.provide('pgAdminUrl', pg.url);
  project.provide('temporalAddress', temporal.address);
  project.provide('workflowBundlePath', bundlePath);
  project.provide('runDir', runDir);
  project.provide('supersets', (supersets?.info as TestSupersets | undefined) ?? null);
  project.provide('gitea', gitea?.info ?? null);

  return async () => {
    await supersets?.stop();
    await gitea?.stop();
    await temporal.stop();
    await pg.stop();
    fs.rmSync(runDir, { recursive: true, force: true });
  };
}
