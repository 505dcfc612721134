import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A scratch copy of the tree with a recipe applied (docs/layout.md's task-kind and companion-kind
// recipes, walked by test/platform/*-kind-recipe.test.ts): the sources and the test support
// copied, node_modules linked, the recipe's files written whole and its lines inserted after
// anchor lines that are there today.

export const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCES = ['contracts', 'lib', 'db', 'domain', 'activities', 'workflows', 'worker', 'api', 'client', 'scripts'];
/** The test support a toy kind's test compiles against (global-setup.ts declares what harness.ts injects). */
const TEST_SUPPORT = ['test/support', 'test/global-setup.ts'];

export interface Recipe {
  /** The scratch directory's name prefix. */
  prefix: string;
  /** Where the recipe's whole files are kept, and each one's place in the tree → its fixture's name. */
  fixtures: string;
  files: Record<string, string>;
  /** Each line inserted after its anchor line. */
  lines: ReadonlyArray<{ file: string; after: string; line: string }>;
  /** What the copy's tsconfig includes of the tests (the toy kind's). */
  testInclude: string;
}

function insertAfter(scratch: string, file: string, anchor: string, line: string): void {
  const lines = fs.readFileSync(path.join(scratch, file), 'utf8').split('\n');
  const at = lines.indexOf(anchor);
  if (at < 0) throw new Error(`${file}: the anchor line is gone (update the recipe test): ${anchor}`);
  lines.splice(at + 1, 0, line);
  fs.writeFileSync(path.join(scratch, file), lines.join('\n'));
}

/** The scratch copy with the recipe applied; its directory (the caller removes it with removeScratch). */
export function scratchWithRecipe(recipe: Recipe): string {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), recipe.prefix));
  for (const dir of [...SOURCES, ...TEST_SUPPORT]) {
    if (fs.existsSync(path.join(ROOT, dir))) fs.cpSync(path.join(ROOT, dir), path.join(scratch, dir), { recursive: true });
  }
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(scratch, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(scratch, 'node_modules'));
  const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
  tsconfig.include = [...SOURCES.filter((d) => d !== 'scripts'), 'scripts/openapi-document.ts', 'test/global-setup.ts', recipe.testInclude];
  fs.writeFileSync(path.join(scratch, 'tsconfig.json'), JSON.stringify(tsconfig));
  for (const [file, fixture] of Object.entries(recipe.files)) {
    fs.mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    fs.copyFileSync(path.join(recipe.fixtures, fixture), path.join(scratch, file));
  }
  for (const { file, after, line } of recipe.lines) insertAfter(scratch, file, after, line);
  return scratch;
}

export function removeScratch(scratch: string | undefined): void {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
}
