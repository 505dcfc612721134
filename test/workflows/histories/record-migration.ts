// Records the migration workflow's histories as the code of another checkout runs them, for
// test/workflows/replay.test.ts: the workflows of <checkout> on Temporal's time-skipping test
// server with mocked activities, each run's history written as Temporal's JSON. A history
// recorded before a change of the workflow's commands (a patch marker, docs/layout.md) is what
// tasks started before a deploy hold; the replay test proves today's code still takes them.
//
// Usage (the checkout a worktree at the commit before the change, its node_modules linked):
//   node test/workflows/histories/record-migration.ts <checkout> <commit>
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { MigrationBatchInput, MigrationBatchResult, MigrationInput, MigrationSummary } from '../../../contracts/migration.ts';
import { cachedCliPath } from '../../../lib/embedded/temporal-cli.ts';
import { installedTestServer } from '../../../scripts/temporal-test-server.ts';
import { migrationTotals } from '../../support/migration-totals.ts';

const [checkout, commit] = process.argv.slice(2);
if (!checkout || !commit) throw new Error('usage: record-migration.ts <checkout> <commit>');
const OUT = import.meta.dirname;

/** A task of `dashboards` dashboards, continued as new every `itemsPerRun`, whose batches import every one or find every one unchanged. */
interface Scenario {
  name: string;
  dashboards: number;
  itemsPerRun: number;
  unchanged: boolean;
}
/**
 * A first migration (batches, each verified beside the next, the last handed over a
 * continue-as-new), and reruns that find nothing changed, in one run (where code that reads a
 * rerun wide makes fewer batches) and continued as new.
 */
const SCENARIOS: Scenario[] = [
  { name: 'first', dashboards: 40, itemsPerRun: 32, unchanged: false },
  { name: 'rerun', dashboards: 40, itemsPerRun: 100, unchanged: true },
  { name: 'rerun-continued', dashboards: 40, itemsPerRun: 32, unchanged: true },
];

const REQUEST: Omit<MigrationInput, 'dashboardIds'> = {
  sourceEnvId: 'env-source',
  targetEnvId: 'env-target',
  dbMappings: [{ source_database_id: 1, target_database_id: 2 }],
  overwrite: true,
  dryRun: false,
};

/**
 * The optional fields of the checkout's batch answer (its contracts/migration.ts), read once: the
 * activities of that commit sent no field its contract lacks, so neither do the mocks.
 */
const contract = fs.readFileSync(path.join(checkout, 'contracts/migration.ts'), 'utf8');
const answerHas = Object.fromEntries(
  (['reverify', 'widen'] as const).map((f) => [f, new RegExp(`^\\s+${f}\\?:`, 'm').test(contract)]),
) as Record<'reverify' | 'widen', boolean>;

/** The batch's answer as the scenario says, as that commit's activity gave it: every dashboard imported, or every one unchanged. */
function answer(input: MigrationBatchInput, s: Scenario): MigrationBatchResult {
  const items = input.batch.map((d) => {
    const at = { ...d, target_dashboard_id: 9000 + d.id, dashboard_uuid: `uuid-${d.id}` };
    if (!s.unchanged) return { ...at, status: 'imported' as const, planned_hash: `hash-${d.id}` };
    return { ...at, status: 'unchanged' as const, ...(answerHas.reverify ? { reverify: true } : {}) };
  });
  return { items, learned: [], ...(s.unchanged && answerHas.widen ? { widen: true } : {}) };
}

const summary: MigrationSummary = {
  status: 'SUCCEEDED',
  message: null,
  totals: migrationTotals(),
  cancelled: false,
};

async function record(env: TestWorkflowEnvironment, s: Scenario): Promise<void> {
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.join(checkout!, 'workflows/index.ts'),
    workflowInterceptorModules: [path.join(checkout!, 'workflows/tracing.ts')],
  });
  const taskQueue = `record-${randomUUID()}`;
  const activities = {
    markTaskRunning: async () => 'running',
    taskItemsPerRun: async () => s.itemsPerRun,
    migrateBatch: async (input: MigrationBatchInput) => answer(input, s),
    verifyMigratedBatch: async () => ({ failed: 0 }),
    recordDashboardFailures: async () => undefined,
    finishMigration: async () => summary,
    finishTask: async () => undefined,
  };
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle, activities });
  const workflowId = `task-${randomUUID()}`;
  const input: MigrationInput = { ...REQUEST, dashboardIds: Array.from({ length: s.dashboards }, (_, i) => 500 - i * 3) };
  const handle = await env.client.workflow.start('migrationWorkflow', { args: [input], taskQueue, workflowId });
  await worker.runUntil(handle.result());
  // Each run of the task (continued as new every itemsPerRun dashboards) is a history of its own, in the order they ran,
  // in the JSON Temporal's CLI writes (`temporal workflow show --output json`, what Worker.runReplayHistory reads).
  const runs: unknown[] = [];
  let runId: string | undefined = handle.firstExecutionRunId;
  while (runId) {
    const history = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push(
      JSON.parse(
        execFileSync(cachedCliPath(), ['workflow', 'show', '--address', env.address, '-w', workflowId, '-r', runId, '-o', 'json'], {
          encoding: 'utf8',
        }),
      ),
    );
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  const file = path.join(OUT, `migration-${s.name}-${commit}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ commit, workflowId, runs })}\n`);
  console.log(`${file}: ${runs.length} run(s)`);
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
  const launcher = installedTestServer();
  if (!launcher) throw new Error("Temporal's time-skipping test server is not installed: npm run setup:temporal-test-server");
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
  try {
    for (const s of SCENARIOS) await record(env, s);
  } finally {
    await env.teardown();
  }
}

await main();
