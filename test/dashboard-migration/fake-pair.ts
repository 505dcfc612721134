import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { migrateOnPair } from './pair-tasks.ts';

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
