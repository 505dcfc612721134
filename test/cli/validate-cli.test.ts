import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, prefixedTables, registerEnvironment } from '../dashboard-migration/support.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import {
  createDashboard,
  createDataset,
  createSqliteDatabase,
  createTableChart,
  type SupersetClient,
} from '../support/superset/fixtures.ts';

/**
 * `switchyard validate <env>` (the real binary through its launcher) against the real API,
 * worker and Superset 6.1.0 (a): two dashboards by id, one of them reading a dropped table;
 * with --wait the command follows the task and exits 2 (some dashboards broken, others not),
 * and its JSON answer lists each dashboard's status.
 */
const BIN = fileURLToPath(new URL('../../cli/switchyard.cjs', import.meta.url));
const enabled = inject('supersets') !== null;
const P = `vc${Date.now().toString(36)}`;
let h: Harness;
let a: SupersetClient;
let home: string;
const ids = { ok: 0, broken: 0 };

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      BIN,
      args,
      {
        env: {
          PATH: process.env.PATH,
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, '.config'),
          SWITCHYARD_URL: h.baseUrl,
          SWITCHYARD_TOKEN: h.adminToken,
        },
        timeout: 240_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  h = await createHarness({ worker: true });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-validate-cli-'));
  if (!enabled) return;
  a = await client('a');
  const db = await createSqliteDatabase(a, { name: `${P}_wh`, path: path.join(inject('runDir'), P, 'wh.db'), tables: prefixedTables(P) });
  const [sales, customers] = await Promise.all([
    createDataset(a, { database: db.id, tableName: `${P}_sales` }),
    createDataset(a, { database: db.id, tableName: `${P}_customers` }),
  ]);
  ids.ok = (
    await createDashboard(a, {
      title: `${P} ok`,
      charts: [await createTableChart(a, { name: `${P} regions`, datasetId: sales.id, columns: ['region'] })],
    })
  ).id;
  ids.broken = (
    await createDashboard(a, {
      title: `${P} gone`,
      charts: [await createTableChart(a, { name: `${P} people`, datasetId: customers.id, columns: ['name'] })],
    })
  ).id;
  const file = new DatabaseSync(db.path);
  file.exec(`DROP TABLE "${P}_customers"`);
  file.close();
  await registerEnvironment(h, 'a', `${P}-a`);
}, 180_000);
afterAll(async () => {
  a?.close();
  await h?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!enabled)('switchyard validate', () => {
  it('validates the dashboards named, follows the task and exits 2 when one of them is broken', { timeout: 240_000 }, async () => {
    const r = await run(['-o', 'json', '-q', 'validate', `${P}-a`, '--dashboard', `${ids.ok},${ids.broken}`, '--wait']);
    expect(r.code, r.stderr).toBe(2);
    const task = JSON.parse(r.stdout);
    expect(task).toMatchObject({ type: 'validate', status: 'FAILED' });
    const items = task.result.items.map((i: any) => [i.id, i.status]);
    expect(items).toEqual([
      [ids.ok, 'passed'],
      [ids.broken, 'broken'],
    ]);
  });

  it('refuses a bad id as a usage error before anything is asked', async () => {
    const r = await run(['validate', `${P}-a`, '--dashboard', 'x']);
    expect(r.code).toBe(3);
  });
});
