import { expect } from 'vitest';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

/** A harness with a worker and two fake Supersets registered as environments: a migration's source and target. */
export interface FakePair {
  h: Harness;
  source: FakeSuperset;
  target: FakeSuperset;
  sourceEnv: string;
  targetEnv: string;
  /** As the admin: `admin('POST', path, { json })`. */
  admin: Harness['request'];
  close(): Promise<void>;
}

export async function startFakePair(env: Record<string, string> = {}): Promise<FakePair> {
  const [h, source, target] = await Promise.all([createHarness({ worker: true, env }), startFakeSuperset(), startFakeSuperset()]);
  const [sourceEnv, targetEnv] = await Promise.all(
    [source, target].map((f) => createEnvironment(h, { baseUrl: f.baseUrl, username: f.username, password: f.password })),
  );
  return {
    h,
    source,
    target,
    sourceEnv,
    targetEnv,
    admin: ((method: string, path: string, opts: Record<string, unknown> = {}) =>
      h.request(method, path, { ...opts, token: h.adminToken })) as Harness['request'],
    async close() {
      await h.close();
      await Promise.all([source.close(), target.close()]);
    },
  };
}

/**
 * Seeds `n` dashboards (titles `<prefix> 0` ..) in the source, a database for them in the target,
 * and answers their ids, titles and the database mapping a migration needs.
 */
export function seedForMigration(pair: FakePair, prefix: string, n: number) {
  const dashboards = pair.source.seedDashboards(n, { prefix, charts: 2 });
  const sourceDb = pair.source.databases.find((d) => d.database_name === `${prefix} database`)!;
  const targetDb = pair.target.addDatabase({ name: `${prefix} warehouse` });
  return {
    ids: dashboards.map((d) => d.id),
    titles: dashboards.map((d) => d.dashboard_title),
    mapping: [{ source_database_id: sourceDb.id, target_database_id: targetDb.id }],
  };
}

/** What starting and following a migration needs of a pair, fake (here) or real (real-pair.ts). */
export type MigrationPair = Pick<FakePair, 'h' | 'admin' | 'sourceEnv' | 'targetEnv'>;

/** Starts a migration of these source dashboards through the API (the admin): its task id. */
export async function startOnPair(pair: MigrationPair, ids: number[], mapping: unknown): Promise<string> {
  const r = await pair.admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: ids, db_mappings: mapping },
  });
  expect(r.status, r.text).toBe(202);
  return r.body.task_id;
}

/** Migrates these source dashboards through the API (the admin) and answers the task once it has ended. */
export async function migrateOnPair(pair: MigrationPair, ids: number[], mapping: unknown) {
  return pair.h.waitForTask(await startOnPair(pair, ids, mapping), undefined, 180_000);
}

/**
 * A migration of these dashboards started once `hold` has set up what it holds, with the sign it
 * is released by: the task's log holding a line containing `text`. No timer releases it: a task
 * that never writes the line never ends, and the test's own timeout fails it. Answers the ended task.
 */
export async function migrateHeldUntilLogged(
  pair: MigrationPair,
  seeded: { ids: number[]; mapping: unknown },
  text: string,
  hold: (release: Promise<unknown>) => void,
) {
  const taskId = Promise.withResolvers<string>();
  const ended = Promise.withResolvers<void>();
  const seen = logLineSeen(pair, taskId.promise, text, ended.promise);
  hold(seen);
  try {
    taskId.resolve(await startOnPair(pair, seeded.ids, seeded.mapping));
    return await pair.h.waitForTask(await taskId.promise, undefined, 180_000);
  } finally {
    ended.resolve();
    await seen;
  }
}

/**
 * Settles once the task's log holds a line containing `text` (asked every 50 ms: the interval of a
 * poll, never a bound), or `stop` settles (the caller's wait has ended).
 */
export async function logLineSeen(pair: MigrationPair, taskId: Promise<string>, text: string, stop: Promise<unknown>): Promise<void> {
  let stopped = false;
  // expected: a stop that fails stops the wait as well (the caller meets its failure by awaiting `stop`).
  stop.then(
    () => (stopped = true),
    () => (stopped = true),
  );
  const id = await Promise.race([taskId, stop.then(() => null)]);
  while (id !== null && !stopped) {
    const r = await pair.admin('GET', `/api/tasks/${id}/logs?text=${encodeURIComponent(text)}&limit=1`);
    if (r.status === 200 && r.body.items.length) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Seeds `n` dashboards (seedForMigration), lets `before` see their ids, and migrates them (migrateOnPair). */
export async function migrateSeeded(pair: FakePair, prefix: string, n: number, before?: (ids: number[]) => void) {
  const { ids, mapping } = seedForMigration(pair, prefix, n);
  before?.(ids);
  return migrateOnPair(pair, ids, mapping);
}

/** Records the dashboard titles of every bundle the target is asked to import (a rule that never refuses one), one list per import call. */
export function recordImports(target: FakeSuperset): string[][] {
  const sent: string[][] = [];
  target.failImport({
    when: (files) => {
      sent.push(Object.values(files).flatMap((f) => (typeof f.dashboard_title === 'string' ? [f.dashboard_title] : [])));
      return false;
    },
    status: 500,
    body: {},
  });
  return sent;
}
