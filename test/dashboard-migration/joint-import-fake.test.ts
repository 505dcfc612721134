// Why the fake: a joint import refused on demand, to see the dashboards imported one by one after it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordImports, seedForMigration, startFakePair, type FakePair } from './fake-pair.ts';
import { migrateOnPair } from './pair-tasks.ts';

/**
 * A batch imports its dashboards in one call; a refused joint import changes nothing and
 * its dashboards go one by one, each ending with Superset's own answer. Between two fake
 * Supersets, so an import can be refused on demand.
 */
let pair: FakePair;

beforeAll(async () => {
  pair = await startFakePair();
}, 120_000);
afterAll(async () => pair?.close());

/** Eight dashboards (titles `<prefix> 0` .. `<prefix> 7`), migrated; answers the task and the titles of every bundle the target was sent. */
async function migrateEight(prefix: string, refuse?: string) {
  const { ids, mapping } = seedForMigration(pair, prefix, 8);
  const sent = recordImports(pair.target);
  // After the recorder, which sees every bundle first.
  if (refuse)
    pair.target.failImport({
      when: (files) => Object.values(files).some((f) => f.dashboard_title === refuse),
      status: 500,
      body: { message: 'Import dashboard failed for an unknown reason' },
    });
  const r = await pair.admin('POST', '/api/dashboards/migrate', {
    json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: ids, db_mappings: mapping },
  });
  expect(r.status, r.text).toBe(202);
  const task = await pair.h.waitForTask(r.body.task_id, undefined, 120_000);
  pair.target.clearFailures();
  return { task, sent, ids };
}

describe('joint imports', () => {
  it('imports a batch of dashboards in one call, the first batch too', async () => {
    const { task, sent } = await migrateEight('Joint');
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.result.totals).toMatchObject({ imported: 8, failed: 0 });
    // One batch, one import call: no dashboard goes alone first.
    expect(sent.map((titles) => titles.length)).toEqual([8]);
    expect(sent.flat().sort()).toEqual(['Joint 0', 'Joint 1', 'Joint 2', 'Joint 3', 'Joint 4', 'Joint 5', 'Joint 6', 'Joint 7']);
  });

  it('a joint import refused for a field the target does not know learns it from the refusal and sends the lot again without it', async () => {
    const { ids, mapping } = seedForMigration(pair, 'Learn', 8);
    const sent = recordImports(pair.target);
    // As an older release answers a newer bundle: 422, naming each dataset file that carries the key it does not know.
    const carrying = (files: Record<string, Record<string, unknown>>) =>
      Object.keys(files).filter((path) => path.startsWith('datasets/') && 'template_params' in files[path]!);
    pair.target.failImport({
      when: (files) => carrying(files).length > 0,
      status: 422,
      body: (files: Record<string, Record<string, unknown>>) => ({
        errors: [
          {
            message: 'Error importing dashboard',
            error_type: 'GENERIC_COMMAND_ERROR',
            level: 'error',
            extra: Object.fromEntries(carrying(files).map((path) => [path, { template_params: ['Unknown field.'] }])),
          },
        ],
      }),
    });
    const task = await migrateOnPair(pair, ids, mapping);
    pair.target.clearFailures();
    expect(task.status, JSON.stringify(task.error)).toBe('SUCCEEDED');
    expect(task.result.totals).toMatchObject({ imported: 8, failed: 0 });
    // The lot refused once, then sent again whole: no dashboard imported alone, none planned again.
    expect(sent.map((titles) => titles.length)).toEqual([8, 8]);
    for (const item of task.result.items) {
      expect(item.import_attempts).toBe(2);
      expect(item.dropped_fields).toEqual([expect.objectContaining({ kind: 'dataset', field: 'template_params', count: 1 })]);
      expect(item.learned_rejections).toEqual([{ kind: 'datasets', field: 'template_params' }]);
    }
  });

  it('a refused joint import changes nothing; each of its dashboards is imported alone and one fails with its own answer', async () => {
    const { task, sent, ids } = await migrateEight('Refused', 'Refused 5');
    expect(task.status).toBe('FAILED');
    expect(task.result.totals).toMatchObject({ requested: 8, imported: 7, failed: 1, not_started: 0 });
    const failed = task.result.items.filter((i: any) => i.status === 'failed');
    expect(failed).toEqual([
      expect.objectContaining({
        id: ids[5],
        step: 'import',
        upstream_error: expect.objectContaining({ status: 500, message: 'Import dashboard failed for an unknown reason' }),
      }),
    ]);
    // The joint call of eight, refused, then each of the eight alone.
    expect(sent.map((titles) => titles.length)).toEqual([8, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(
      pair.target.dashboards
        .map((d) => d.dashboard_title)
        .filter((t) => t.startsWith('Refused'))
        .sort(),
    ).toEqual(['Refused 0', 'Refused 1', 'Refused 2', 'Refused 3', 'Refused 4', 'Refused 6', 'Refused 7']);
  });

  it('a re-run whose recorded target copy is gone since imports that one again and finds the others unchanged', async () => {
    const { ids, mapping } = seedForMigration(pair, 'Regone', 3);
    const migrate = async () => {
      const r = await pair.admin('POST', '/api/dashboards/migrate', {
        json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: ids, db_mappings: mapping },
      });
      expect(r.status, r.text).toBe(202);
      return pair.h.waitForTask(r.body.task_id, undefined, 120_000);
    };
    expect((await migrate()).status).toBe('SUCCEEDED');
    // Someone deletes the copy of 'Regone 1' in the target: the batch's early export of the three
    // recorded copies is refused (404), and the two the target still holds are exported again.
    const at = pair.target.dashboards.findIndex((d) => d.dashboard_title === 'Regone 1');
    pair.target.dashboards.splice(at, 1);
    const mark = pair.target.mark();
    const sent = recordImports(pair.target);
    const again = await migrate();
    pair.target.clearFailures();
    expect(again.status, JSON.stringify(again.error)).toBe('SUCCEEDED');
    expect(again.result.items.map((i: any) => i.status)).toEqual(['unchanged', 'imported', 'unchanged']);
    expect(sent).toEqual([['Regone 1']]);
    const exports = pair.target.requests.slice(mark).filter((r) => r.path === '/api/v1/dashboard/export/');
    // The three recorded copies asked together first (refused: one is gone), then the two still there.
    expect(exports.map((r) => (r.q as number[]).length)).toEqual(expect.arrayContaining([3, 2]));
  });
});
