import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { createSqliteDatabase } from '../support/superset/fixtures.ts';
import { buildSource, client, prefixedTables, registerEnvironment, superset, type SourceFixture } from '../dashboard-migration/support.ts';
import { available } from '../support/ci.ts';

/** util-linux `script` (Debian's bsdutils) gives the binary a terminal; .ci/run installs it, so under CI=true its absence fails. */
const hasScript = available('script (util-linux)', fs.existsSync('/usr/bin/script'), "install Debian's bsdutils (.ci/run does)");

/**
 * The `switchyard` binary as a person uses it: through a pseudo-terminal (util-linux `script`)
 * where it prints for people, against the real API, worker and Superset a → b. Tables with a
 * headline, rows and next actions; environments added with the password from stdin; migrate's
 * options generated from the OpenAPI document and its selections; shell completion.
 */
const BIN = fileURLToPath(new URL('../../cli/switchyard.cjs', import.meta.url));
const enabled = inject('supersets') !== null && hasScript;
const P = `cp${Date.now().toString(36)}`;
let h: Harness;
let apiKey: string;
let home: string;
let src: SourceFixture;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const env = () => ({
  PATH: process.env.PATH,
  HOME: home,
  TERM: 'xterm',
  COLUMNS: '160',
  SWITCHYARD_URL: h.baseUrl,
  SWITCHYARD_API_KEY: apiKey,
});

/** Through a pseudo-terminal: `script` runs the binary on a pty; -e passes its exit code on. */
function tty(args: string[]): Promise<Run> {
  const cmd = [BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    execFile('/usr/bin/script', ['-qec', cmd, '/dev/null'], { env: env(), timeout: 240_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.replace(/\r/g, ''), stderr }),
    );
  });
}

/** Plainly, with `input` on stdin (how a password reaches `--password-stdin`). */
function piped(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(BIN, args, { env: env(), timeout: 240_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input ?? '');
  });
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-cli-people-'));
  const key = await h.request('POST', '/api/admin/api-keys', {
    token: h.adminToken,
    json: {
      name: `${P}-person`,
      permissions: ['tasks:READ', 'environments:READ', 'environments:WRITE', 'dashboards:READ', 'dashboards:MIGRATE'],
    },
  });
  expect(key.status, key.text).toBe(201);
  apiKey = key.body.key;
  const [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  const envA = await registerEnvironment(h, 'a', `${P}-a`);
  const envB = await registerEnvironment(h, 'b', `${P}-b`);
  const targetDb = await createSqliteDatabase(b, { name: `${P}_warehouse`, path: path.join(dir, `${P}-b.db`), tables: prefixedTables(P) });
  const m = await h.request('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    token: h.adminToken,
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: targetDb.id }] },
  });
  expect(m.status, m.text).toBe(200);
}, 300_000);
afterAll(async () => {
  await h?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe.runIf(enabled)('switchyard CLI for people', () => {
  it('env add reads the password from stdin only; update and remove by name', async () => {
    const s = superset('b');
    const name = `${P}-added`;
    // a password as an argument is refused (it would sit in the shell history and in ps)
    const arg = await piped(['env', 'add', name, '--url', s.baseUrl, '--username', s.username, '--password', s.password]);
    expect(arg.code).toBe(3);
    const added = await piped(['env', 'add', name, '--url', s.baseUrl, '--username', s.username, '--password-stdin'], `${s.password}\n`);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`added environment ${name}`);
    expect(added.stdout).toContain(`next: switchyard env test ${name}`);
    expect(added.stdout + added.stderr).not.toContain(s.password);
    expect((await piped(['env', 'test', name])).code).toBe(0);
    const updated = await piped(['-o', 'json', 'env', 'update', name, '--description', 'for the CLI test']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ name, description: 'for the CLI test', verify_tls: true });
    // the stored password was kept: the environment still signs in
    expect((await piped(['env', 'test', name])).code).toBe(0);
    expect((await piped(['env', 'update', name])).code).toBe(3);
    const removed = await piped(['env', 'remove', name]);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await piped(['-o', 'json', 'env', 'list'])).stdout).not.toContain(`"${name}"`);
  }, 120_000);

  it('a dry run by title on a terminal prints per-dashboard create/update/unchanged counts, --diff the differences, and report a table', async () => {
    const title = src.dashboards[0]!.title;
    const r = await tty(['migrate', '--from', `${P}-a`, '--to', `${P}-b`, '--title', title, '--dry-run', '--wait', '--diff']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/migration migration-\S+\s+SUCCEEDED\s+\(dry run: nothing written\)/);
    expect(r.stdout).toMatch(/CREATE\s*│\s*UPDATE\s*│\s*UNCHANGED/);
    // one row: the dashboard, its two charts, its dataset and database are new in the target
    const row = r.stdout.split('\n').find((l) => l.includes(title))!;
    expect(row).toMatch(new RegExp(`│\\s*${src.dashboards[0]!.id}\\s*│.*│\\s*planned\\s*│\\s*[1-9]\\d*\\s*│\\s*0\\s*│\\s*\\d+\\s*│`));
    expect(r.stdout).toContain(`Differences of ${src.dashboards[0]!.id}`);
    expect(r.stdout).toMatch(/\+ dashboard .* \(new in the target\)/);
    const id = /migration-\S+/.exec(r.stdout)![0];

    const report = await tty(['report', id]);
    expect(report.code, report.stdout).toBe(0);
    expect(report.stdout).not.toContain('report: {');
    expect(report.stdout).toMatch(new RegExp(`migration ${id}\\s+SUCCEEDED`));
    expect(report.stdout).toContain(title);
    expect(report.stdout).toMatch(/│\s*planned\s*│/);
    // JSON is unchanged: the API's answer
    expect(JSON.parse((await piped(['-o', 'json', 'report', id])).stdout).report.task_id).toBe(id);
  }, 300_000);

  it('--search selects every matching dashboard; options the API has and the CLI hand-writes nowhere (rls) reach the request', async () => {
    const r = await piped([
      '-o',
      'json',
      'migrate',
      '--from',
      `${P}-a`,
      '--to',
      `${P}-b`,
      '--search',
      `${P} sales`,
      '--dry-run',
      '--rls',
      'ignore',
      '--wait',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const task = JSON.parse(r.stdout);
    expect(task.result.items.map((i: { id: number }) => i.id).sort()).toEqual(src.dashboards.map((d) => d.id).sort());
    expect(task.params).toMatchObject({ rls: 'ignore', dry_run: true });
    expect((await piped(['migrate', '--from', `${P}-a`, '--to', `${P}-b`, '--rls', 'maybe', '--all'])).code).toBe(3);
    expect((await piped(['migrate', '--from', `${P}-a`, '--to', `${P}-b`, '--title', `${P} no such title`])).code).toBe(3);
    expect((await piped(['migrate', '--from', `${P}-a`, '--to', `${P}-b`])).code).toBe(3);
  }, 300_000);

  it('an answer that is one record (dashboards show) reads as a field table and a table per list', async () => {
    const d = src.dashboards[0]!;
    const r = await tty(['dashboards', 'show', String(d.id), '--env', `${P}-a`]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`│ title\\s+│ ${d.title}\\s+│`));
    expect(r.stdout).toMatch(/CHARTS \(2\)\nID\s+NAME\s+VIZ_TYPE/);
    expect(r.stdout).not.toMatch(/charts: \[/);
  }, 60_000);

  it('completion bash prints a script that completes commands and generated flags', async () => {
    const r = await piped(['completion', 'bash']);
    expect(r.code, r.stderr).toBe(0);
    const script = path.join(home, 'completion.sh');
    fs.writeFileSync(script, r.stdout);
    const complete = (words: string[]) =>
      new Promise<string>((resolve) =>
        execFile(
          'bash',
          [
            '-c',
            `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _switchyard; echo "\${COMPREPLY[@]}"`,
          ],
          (_e, out) => resolve(out.trim()),
        ),
      );
    expect((await complete(['switchyard', 'env', 'a'])).split(' ')).toEqual(['add']);
    expect((await complete(['switchyard', '-o', 'json', 'migrate', '--from', 'x', '--rl'])).split(' ').sort()).toEqual([
      '--rls',
      '--rls-overwrite',
    ]);
    expect(await complete(['switchyard', 'compl'])).toBe('completion');
  }, 60_000);
});
