import { expect } from 'vitest';
import type { Harness } from '../support/harness.ts';

// Starting and following a migration through the API on any pair of environments: the real pair
// (real-pair.ts) and the fake one (fake-pair.ts) alike, so a test on real Superset imports no fake.

/** What starting and following a migration needs of a pair, fake (fake-pair.ts) or real (real-pair.ts). */
export interface MigrationPair {
  h: Harness;
  /** As the admin: `admin('POST', path, { json })`. */
  admin: Harness['request'];
  sourceEnv: string;
  targetEnv: string;
}

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
