// The fast workflow tests' parts (test/workflows/, docs/tests.md#fast-workflow-tests): Temporal's
// time-skipping test server, the project's workflow bundle, and activities mocked against the
// real activity types, each call recorded with the run it came from.
import { Context } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Activities } from '../../activities/index.ts';
import { installedTestServer, TEST_SERVER_VERSION } from '../../scripts/temporal-test-server.ts';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../worker/create-worker.ts';
import { afterAll, beforeAll } from 'vitest';
import { available } from './ci.ts';

const launcher = installedTestServer();
let runtimeInstalled = false;

/** Whether the test server is installed: locally its absence skips the file, under CI=true it fails it, named. */
export const hasTestServer = available(
  `Temporal's time-skipping test server ${TEST_SERVER_VERSION}`,
  launcher !== undefined,
  'npm run setup:temporal-test-server (.ci/run does)',
);

/** Starts of the test server tried before giving up (see startTimeSkipping). */
const START_ATTEMPTS = 3;

/**
 * Starts the test server (its own process, on a free port) and connects to it. The SDK gives the
 * server 5 s to listen; the launcher's JVM takes 0.3-0.6 s on a quiet machine and 1.8-2.9 s at load
 * 25 on 2 cores, so a start that runs out is tried again (a slow machine must not fail the file),
 * up to START_ATTEMPTS times. The workflows' own log lines stay quiet unless TEST_LOG_LEVEL=debug
 * asks for them: the assertions are on the calls.
 */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  if (!launcher) throw new Error(`Temporal's time-skipping test server ${TEST_SERVER_VERSION} is not installed`);
  // Once per process (a test file runs in a fork of its own), before anything uses the runtime.
  // The core's own lines too: it warns on every worker that the test server lacks a capability these tests do not use.
  const level = process.env.TEST_LOG_LEVEL === 'debug' ? 'DEBUG' : 'ERROR';
  if (!runtimeInstalled)
    Runtime.install({ logger: new DefaultLogger(level), telemetryOptions: { logging: { filter: { core: level, other: level } } } });
  runtimeInstalled = true;
  const failures: string[] = [];
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
    } catch (err) {
      failures.push(`attempt ${attempt}: ${String(err)}`);
      console.warn(`the time-skipping test server did not start (attempt ${attempt} of ${START_ATTEMPTS}): ${String(err)}`);
    }
  }
  throw new Error(`the time-skipping test server did not start in ${START_ATTEMPTS} attempts:\n${failures.join('\n')}`);
}

/**
 * The bundle the worker runs (workflows/index.ts with the tracing interceptor, as worker/create-worker.ts
 * builds it), made once per file: each test's worker takes it instead of bundling again.
 */
/**
 * A test file's time-skipping server and workflow bundle: started once before its tests (when the
 * server is there; without it the file fails under CI, see hasTestServer) and torn down after.
 */
export function onTimeSkipping(set: (env: TestWorkflowEnvironment, bundle: WorkflowBundle) => void): void {
  let started: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    if (!hasTestServer) return;
    const [env, bundle] = await Promise.all([startTimeSkipping(), bundleWorkflows()]);
    started = env;
    set(env, bundle);
  });
  afterAll(async () => {
    await started?.teardown();
  });
}

export function bundleWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) },
  });
}

/** One activity call: which, its input, and the workflow run that scheduled it (a continued run has a new run id). */
export interface ActivityCall<K extends keyof Activities = keyof Activities> {
  activity: K;
  input: Parameters<Activities[K]>[0];
  runId: string;
  /** When the server scheduled it, in the server's (skipped) time. */
  scheduledMs: number;
  /** Which attempt this is (retries of a failed attempt count up from 1). */
  attempt: number;
}

/** Mocked activities: a part of the real `Activities`, so a changed activity signature fails the typecheck here. */
export type MockActivities<K extends keyof Activities> = Pick<Activities, K>;

/** Records every call of `mocks` in `calls`, in the order the worker started them, then runs the mock. */
export function recorded<K extends keyof Activities>(mocks: MockActivities<K>, calls: ActivityCall[]): MockActivities<K> {
  const wrapped: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(mocks) as Array<[K, (input: unknown) => Promise<unknown>]>) {
    wrapped[name] = (input: unknown) => {
      const { workflowExecution, scheduledTimestampMs, attempt } = Context.current().info;
      calls.push({
        activity: name,
        input: input as never,
        runId: workflowExecution?.runId ?? 'none',
        scheduledMs: scheduledTimestampMs,
        attempt,
      });
      return fn(input);
    };
  }
  return wrapped as unknown as MockActivities<K>;
}

/** The recorded calls of one activity, in order, typed by its input. */
export function callsOf<K extends keyof Activities>(calls: ActivityCall[], activity: K): Array<ActivityCall<K>> {
  return calls.filter((c): c is ActivityCall<K> => c.activity === activity);
}

/** A worker on the test server for one test: its own task queue, the file's bundle, the test's mocks. */
export function testWorker(env: TestWorkflowEnvironment, taskQueue: string, bundle: WorkflowBundle, activities: object): Promise<Worker> {
  return Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
}
