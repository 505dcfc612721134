// Why the fake: incidental: no Superset answer is asserted; the fake is only a registered environment.
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities/index.ts';
import type { BrowserCheck } from '../../contracts/browser-check.ts';
import { migrateBody, migrationInput } from '../../api/dashboard-migration/input.ts';
import { decisionBody } from '../../api/clean-release/schemas.ts';
import { gitDeployInput } from '../../api/git/input.ts';
import { deployBody } from '../../api/git/schemas.ts';
import { createLogger } from '../../lib/logger.ts';
import { temporalConnectionOptions } from '../../lib/temporal-connection.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/**
 * `verification: "browser"` reaches the browser check from each request that takes it: the
 * migration's, a git deploy's and a release publish's body become their task inputs, and the deploy
 * and publish workflows (the real ones, on the real Temporal) call the browser check for the
 * dashboard they imported and let its verdict decide the item. The imports and the check itself
 * are stand-ins here (browser-check.test.ts runs the real one against real Superset).
 */
const failing: BrowserCheck = {
  verdict: 'failed',
  reason: "1 chart(s) do not render in the target but do in the source: 'sales'",
  charts: [{ name: 'sales', state: 'error', message: 'no such column: units', source_state: 'ok' }],
  target_screenshot_id: '11111111-1111-4111-8111-111111111111',
  duration_ms: 5,
};

let h: Harness;
let fake: FakeSuperset;
let worker: Worker;
let running: Promise<void>;
let connection: NativeConnection;
let envA: string;
let envB: string;
const checked: Array<{ targetEnvId: string; dashboardId: number; source?: { envId: string; dashboardId: number } }> = [];

beforeAll(async () => {
  [h, fake] = await Promise.all([createHarness(), startFakeSuperset()]);
  envA = await createEnvironment(h, { baseUrl: fake.baseUrl, username: 'admin', password: 'admin' });
  envB = await createEnvironment(h, { baseUrl: fake.baseUrl, username: 'admin', password: 'admin' });
  const { stores, keyring, config } = h.boot.context;
  const real = createActivities({
    stores,
    keyring,
    config,
    logger: createLogger('warn', 'test'),
    superset: () => Promise.reject(new Error('no Superset here')),
    backupStore: () => {
      throw new Error('no backups here');
    },
  });
  const activities = {
    ...real,
    deployDashboardCommit: async (input: { dashboardUuid: string; commit: string; targetEnvId: string }) => ({
      kind: 'repository' as const,
      id: input.dashboardUuid,
      title: 'sales',
      status: 'deployed' as const,
      outcome: 'succeeded' as const,
      next_actions: [],
      dashboard_uuid: input.dashboardUuid,
      commit: input.commit,
      target_env_id: input.targetEnvId,
      target_dashboard_id: 42,
      chart_uuids: [],
    }),
    verifyMigratedDashboard: async () => ({ ok: true, dashboard_present: true, charts_expected: 1, charts_linked: 1, charts: [] }),
    recordGitDeployment: async () => undefined,
    publishReleaseArtifact: async (input: { dashboardUuid: string }) => ({
      kind: 'dashboard' as const,
      id: input.dashboardUuid,
      title: 'sales',
      status: 'published' as const,
      outcome: 'succeeded' as const,
      next_actions: [],
      sha256: null,
      target_dashboard_id: 7,
      backup_id: null,
      verified: true,
    }),
    settleRelease: async () => undefined,
    browserCheckDashboard: async (input: (typeof checked)[number]) => {
      checked.push(input);
      return failing;
    },
  };
  connection = await NativeConnection.connect(temporalConnectionOptions(config));
  worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: activities as never,
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await fake?.close();
  await h?.close();
});

describe('the browser check option', () => {
  it('becomes the task input of a migration, a git deploy and a publish decision; absent by default; anything else is refused', () => {
    const migrate = { source_env_id: 'a', target_env_id: 'b', dashboard_ids: [1] };
    expect(migrationInput(migrateBody.parse({ ...migrate, verification: 'browser' })).input.verification).toBe('browser');
    expect(migrationInput(migrateBody.parse(migrate)).input).not.toHaveProperty('verification');
    expect(migrateBody.safeParse({ ...migrate, verification: 'screenshots' }).success).toBe(false);
    const deploy = { env_id: 'a', target_env_id: 'b', commit: 'HEAD' };
    expect(
      gitDeployInput(deployBody.parse({ ...deploy, verification: 'browser' }), 1, { uuid: 'u', commit: 'c'.repeat(40) }, null).input
        .verification,
    ).toBe('browser');
    expect(gitDeployInput(deployBody.parse(deploy), 1, { uuid: 'u', commit: 'c'.repeat(40) }, null).input).not.toHaveProperty(
      'verification',
    );
    expect(decisionBody.parse({ verification: 'browser' }).verification).toBe('browser');
    expect(decisionBody.safeParse({ verification: 'pixels' }).success).toBe(false);
  });

  it(
    'a git deploy asked for it opens the deployed dashboard beside the one it came from; a chart broken there fails the deploy',
    { timeout: 120_000 },
    async () => {
      const { task } = await h.boot.context.tasks.create({
        kind: 'git_deploy',
        input: {
          dashboardUuid: 'd1',
          dashboardId: 5,
          envId: envA,
          targetEnvId: envB,
          commit: 'c'.repeat(40),
          overwrite: true,
          dbMappings: [],
          requestedBy: null,
          verification: 'browser',
        },
        params: {},
        owner: null,
      });
      const done = await h.waitForTask(task.id, undefined, 90_000);
      expect(checked).toContainEqual({ targetEnvId: envB, dashboardId: 42, source: { envId: envA, dashboardId: 5 } });
      expect(done.status).toBe('FAILED');
      const [item] = done.result.items;
      expect(item).toMatchObject({
        status: 'deployed_with_errors',
        step: 'verify',
        verification: { ok: false, browser: { verdict: 'failed' } },
      });
      expect(item.error).toContain('browser check');
    },
  );

  it('a publish asked for it opens each published dashboard; a chart broken there fails its item', { timeout: 120_000 }, async () => {
    const { task } = await h.boot.context.tasks.create({
      kind: 'release_publish',
      input: { candidateId: 'cand-1', mode: 'publish', targetEnvId: envB, dashboardUuids: ['p1'], verification: 'browser' },
      params: {},
      owner: null,
    });
    const done = await h.waitForTask(task.id, undefined, 90_000);
    expect(checked).toContainEqual({ targetEnvId: envB, dashboardId: 7 });
    const [item] = done.result.items;
    expect(item).toMatchObject({
      status: 'failed',
      step: 'verify',
      browser: { verdict: 'failed', charts: [{ name: 'sales', state: 'error' }] },
    });
  });
});
