import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, createHarness, type Harness } from '../support/harness.ts';
import { createSqliteDatabase } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, type SourceFixture } from '../dashboard-migration/support.ts';
import { available } from '../support/ci.ts';

/** util-linux `script` (Debian's bsdutils) gives the binary a terminal; .ci/run installs it, so under CI=true its absence fails. */
const hasScript = available('script (util-linux)', fs.existsSync('/usr/bin/script'), "install Debian's bsdutils (.ci/run does)");

/**
 * The real `switchyard` binary (the npm bin, through its launcher) against the real API, worker,
 * PostgreSQL, Temporal and Superset a → b, authenticated by an API key from the environment.
 */
const BIN = fileURLToPath(new URL('../../cli/switchyard.cjs', import.meta.url));
const enabled = inject('supersets') !== null;
const P = `c${Date.now().toString(36)}`;
let h: Harness;
let apiKey: string;
let home: string;
let src: SourceFixture;
let unmapped: SourceFixture;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      BIN,
      args,
      {
        // Only what a pipeline would set: no stored config unless a test writes one.
        env: {
          PATH: process.env.PATH,
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, '.config'),
          SWITCHYARD_URL: h.baseUrl,
          SWITCHYARD_API_KEY: apiKey,
          ...env,
        },
        timeout: 240_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  h = await createHarness({ worker: true });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-cli-'));
  const key = await h.request('POST', '/api/admin/api-keys', {
    token: h.adminToken,
    json: {
      name: `${P}-ci`,
      permissions: ['tasks:READ', 'environments:READ', 'dashboards:READ', 'dashboards:MIGRATE', 'dashboards:BACKUP', 'schedules:READ'],
    },
  });
  expect(key.status, key.text).toBe(201);
  apiKey = key.body.key;
  if (!enabled) return;
  const [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 1 });
  unmapped = await buildSource(a, `${P}x`, dir, { dashboards: 1, table: 'customers' });
  const envA = await registerEnvironment(h, 'a', `${P}-a`);
  const envB = await registerEnvironment(h, 'b', `${P}-b`);
  const targetDb = await createSqliteDatabase(b, { name: `${P}_warehouse`, path: path.join(dir, `${P}-b.db`), tables: prefixedTables(P) });
  const m = await h.request('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    token: h.adminToken,
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
  });
  expect(m.status, m.text).toBe(200);
}, 240_000);
afterAll(async () => {
  await h?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe('switchyard CLI: usage, configuration, output', () => {
  it('exits 3 on bad usage, printing what was wrong', async () => {
    for (const args of [
      ['bogus'],
      ['migrate', '--from', 'a', '--to', 'b', '--dashboards', 'x'],
      ['migrate', '--from', 'a'],
      ['migrate', '--from', 'a', '--to', 'b', '--dashboards', '1', '--companion', 'reports=maybe'],
      ['env'],
      ['-o', 'xml', 'env', 'list'],
    ]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(/error|usage/i);
    }
    // An unknown environment name is the caller's mistake too; no API configured at all as well.
    expect((await run(['dashboards', 'list', '--env', 'no-such-env'])).code).toBe(3);
    const none = await run(['env', 'list'], { SWITCHYARD_URL: undefined, SWITCHYARD_API_KEY: undefined });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('switchyard login');
    expect((await run(['--help'])).code).toBe(0);
  });

  it('an API key from the environment; --output json and yaml are parseable', async () => {
    const r = await run(['-o', 'json', 'tasks', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ items: expect.any(Array), page: 1 });
    const bad = await run(['tasks', 'list'], { SWITCHYARD_API_KEY: 'sy_not_a_key' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('401');
    const sched = await run(['-o', 'json', 'schedules', 'list']);
    expect(sched.code, sched.stderr).toBe(0);
    expect(JSON.parse(sched.stdout)).toEqual({ items: [], total: 0 });
    const y = await run(['-o', 'yaml', 'env', 'list']);
    expect(y.code, y.stderr).toBe(0);
    expect(y.stdout.trim() === '[]' || y.stdout.includes('name:')).toBe(true);
  });

  it('login checks the credential and writes a 0600 config the next commands use', async () => {
    const xdg = path.join(home, 'xdg');
    const noEnv = { SWITCHYARD_URL: undefined, SWITCHYARD_API_KEY: undefined, XDG_CONFIG_HOME: xdg };
    const refused = await run(['login', '--url', h.baseUrl, '--api-key', 'sy_wrong'], noEnv);
    expect(refused.code).toBe(1);
    expect(fs.existsSync(path.join(xdg, 'switchyard', 'config.json'))).toBe(false);

    const r = await run(['login', '--url', h.baseUrl, '--api-key', apiKey], noEnv);
    expect(r.code, r.stderr).toBe(0);
    const file = path.join(xdg, 'switchyard', 'config.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ url: h.baseUrl, api_key: apiKey });
    expect((await run(['-o', 'json', 'tasks', 'list'], noEnv)).code).toBe(0);

    // A password sign-in stores the access token instead, read from stdin here.
    const pw = await new Promise<Run>((resolve) => {
      const child = execFile(
        BIN,
        ['login', '--url', h.baseUrl, '--username', ADMIN.username, '--password-stdin'],
        { env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: xdg } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin!.end(`${ADMIN.password}\n`);
    });
    expect(pw.code, pw.stderr).toBe(0);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(stored).toMatchObject({ url: h.baseUrl, username: ADMIN.username, token: expect.any(String) });
    expect(stored.api_key).toBeUndefined();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(pw.stdout + pw.stderr).not.toContain(ADMIN.password);
  });
});

describe.runIf(enabled)('switchyard CLI against real Superset a → b', () => {
  it('migrate --wait exits 0 with the task as JSON', async () => {
    const r = await run([
      '-o',
      'json',
      'migrate',
      '--from',
      `${P}-a`,
      '--to',
      `${P}-b`,
      '--dashboards',
      String(src.dashboards[0]!.id),
      '--wait',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const task = JSON.parse(r.stdout);
    expect(task).toMatchObject({ type: 'migration', status: 'SUCCEEDED' });
    expect(task.result.items[0]).toMatchObject({ id: src.dashboards[0]!.id, status: 'imported', outcome: 'succeeded' });
    // Off a terminal the progress arrives as plain log lines on stderr.
    expect(r.stderr).toMatch(/progress 1\/1/);

    const report = await run(['-o', 'json', 'report', task.id]);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).report.task_id).toBe(task.id);
  }, 300_000);

  it('a migration with an unmapped database exits 2 and prints the next action', async () => {
    const ids = `${src.dashboards[0]!.id},${unmapped.dashboards[0]!.id}`;
    const r = await run(['migrate', '--from', `${P}-a`, '--to', `${P}-b`, '--dashboards', ids, '--wait']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('has no mapping');
    expect(r.stderr).toMatch(/next: Map source database .* to a target database/);
    expect(r.stderr).toContain('POST /api/dashboards/migrate');
    // The table on stdout names both dashboards with their outcomes.
    expect(r.stdout).toContain('FAILED');
    expect(r.stdout).toContain(String(unmapped.dashboards[0]!.id));
  }, 300_000);

  it('a dry run plans without writing; without --wait it answers the task id at once', async () => {
    const r = await run([
      '-o',
      'json',
      'migrate',
      '--from',
      `${P}-a`,
      '--to',
      `${P}-b`,
      '--dashboards',
      String(src.dashboards[0]!.id),
      '--dry-run',
      '--companion',
      'owners=ignore',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const accepted = JSON.parse(r.stdout);
    expect(accepted.task_id).toMatch(/^migration-/);
    const shown = await run(['-o', 'json', 'tasks', 'show', accepted.task_id, '--wait']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).result).toMatchObject({ dry_run: true, items: [{ status: 'planned' }] });
    // The companion mode given on the command line reached the migration.
    expect(JSON.parse(shown.stdout).result.items[0].companions).toContainEqual(expect.objectContaining({ kind: 'owners', mode: 'ignore' }));
  }, 300_000);

  it.runIf(hasScript)(
    'on a terminal --wait draws a progress bar fed by the live log stream',
    async () => {
      // util-linux `script` gives the binary a pseudo-terminal; -e passes its exit code on.
      const cmd = [BIN, 'backup', '--env', `${P}-a`, '--dashboards', String(src.dashboards[0]!.id), '--wait']
        .map((a) => `'${a}'`)
        .join(' ');
      const r = await new Promise<Run>((resolve) => {
        execFile(
          '/usr/bin/script',
          ['-qec', cmd, '/dev/null'],
          {
            env: { PATH: process.env.PATH, HOME: home, TERM: 'xterm', SWITCHYARD_URL: h.baseUrl, SWITCHYARD_API_KEY: apiKey },
            timeout: 240_000,
          },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\[-{24}\] 0\/1 /);
      expect(r.stdout).toMatch(/\[#{24}\] 1\/1 dashboard \d+/);
      expect(r.stdout).toContain('\r\x1b[2K');
      expect(r.stdout).toMatch(/backup-\S+\s+SUCCEEDED/);
    },
    300_000,
  );
});
