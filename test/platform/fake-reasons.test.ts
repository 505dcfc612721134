// The fake Superset is kept for faults a real one cannot be made to produce (docs/tests.md). This
// holds that rule where it can drift: every test file that starts the fake says why in a
// `Why the fake:` line, and docs/tests.md's table names it; a name in the table that no longer
// uses the fake is stale. No Superset is started: it reads files.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
/** An import statement (one line or several) of the fake or of the fake pair, at a line's start. */
const FAKE_IMPORT = /^import [^;]*?from '(?:(?:\.\.\/)+support\/fake-superset|\.\/fake-pair)\.ts'/m;
const REASON = /Why the fake\b[^:\n]*:/;
/** Modules that build the fake for others: the rule is for the files that use them. */
const HELPERS = new Set(['test/support/fake-superset.ts', 'test/dashboard-migration/fake-pair.ts']);

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The files (as `folder/name`, docs/tests.md's spelling) that start the fake, each with whether it says why. */
export function fakeUsers(files: Array<{ rel: string; text: string }>): Array<{ name: string; saysWhy: boolean }> {
  return files
    .filter((f) => !HELPERS.has(f.rel) && FAKE_IMPORT.test(f.text))
    .map((f) => ({ name: f.rel.replace(/^test\//, '').replace(/\.test\.ts$/, ''), saysWhy: REASON.test(f.text) }));
}

/**
 * The names in docs/tests.md's "Why the fake" table. A cell's name without a folder is in the
 * folder of the name before it (`backups/rls-fake`, `dashboard-migration/rls-fake`; `env-rules-api`, `env-rules-console`).
 */
export function tableNames(markdown: string): string[] {
  const start = markdown.indexOf('| File | Why the fake |');
  if (start < 0) return [];
  const rows = markdown.slice(start).split('\n').slice(2);
  const names: string[] = [];
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    let folder = '';
    for (const [, name] of row.split('|')[1]!.matchAll(/`([^`]+)`/g)) {
      if (name!.includes('/')) folder = name!.slice(0, name!.lastIndexOf('/'));
      names.push(name!.includes('/') ? name! : `${folder}/${name}`);
    }
  }
  return names;
}

describe('the fake Superset, where it stays', () => {
  const files = testFiles(path.join(root, 'test')).map((p) => ({ rel: path.relative(root, p), text: fs.readFileSync(p, 'utf8') }));
  const users = fakeUsers(files);
  const table = tableNames(fs.readFileSync(path.join(root, 'docs/tests.md'), 'utf8'));

  it('is started by test files that each say why, and docs/tests.md names every one of them', () => {
    expect(users.length).toBeGreaterThan(20);
    expect(users.filter((u) => !u.saysWhy).map((u) => u.name)).toEqual([]);
    expect(users.map((u) => u.name).filter((n) => !table.includes(n))).toEqual([]);
  });

  it('has no stale name in the table', () => {
    const used = new Set(users.map((u) => u.name));
    expect(table.filter((n) => !used.has(n))).toEqual([]);
  });

  it('finds a file that starts the fake without saying why, and one the table does not name', () => {
    const fixture = [
      { rel: 'test/x/silent.test.ts', text: "import {\n  startFakeSuperset,\n} from '../support/fake-superset.ts';\n" },
      { rel: 'test/x/told.test.ts', text: "// Why the fake: 500s on demand.\nimport { startFakePair } from './fake-pair.ts';\n" },
      { rel: 'test/x/real.test.ts', text: "import { migrateOnPair } from './pair-tasks.ts';\n" },
    ];
    expect(fakeUsers(fixture)).toEqual([
      { name: 'x/silent', saysWhy: false },
      { name: 'x/told', saysWhy: true },
    ]);
    const md = '| File | Why the fake |\n|---|---|\n| `x/told`, `other` | 500s |\n\nafter';
    expect(tableNames(md)).toEqual(['x/told', 'x/other']);
  });
});
