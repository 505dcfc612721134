// The companion-kind recipe (docs/layout.md, "Adding a companion kind"), walked in a scratch copy
// of the tree, as test/platform/task-kind-recipe.test.ts walks the task kinds': a toy kind's module
// and test (test/platform/fixtures/companion-kind-recipe/), its name and traits in the contract
// and its entry in the registry, nothing else. The registries are static consts, so the copy must
// typecheck (which holds the registry, the contract and the module to each other), and what is
// derived from them (the defaults, the request's schema and the OpenAPI document, the resources a
// recording answers and the lists an activity shares, the documents written and replayed) must
// name the toy kind without having been edited.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT as root, removeScratch, scratchWithRecipe } from '../support/recipe-scratch.ts';

const run = promisify(execFile);
const fixtures = path.join(import.meta.dirname, 'fixtures', 'companion-kind-recipe');
const TEST = 'test/dashboard-migration/toy-rules.test.ts';

/** The recipe's files: written whole. */
const FILES: Record<string, string> = {
  'domain/migration/companions/toy-rules.ts': 'kind.ts.txt',
  [TEST]: 'test.ts.txt',
};

/** The recipe's lines: each inserted after an anchor line that is there today. */
const LINES: Array<{ file: string; after: string; line: string }> = [
  { file: 'contracts/companions.ts', after: "  'embedded',", line: "  'toy_rules'," },
  {
    file: 'contracts/companions.ts',
    after: "  embedded: { mode: 'copy', label: { en: 'Embedded configuration', ru: 'Настройки встраивания' } },",
    line: "  toy_rules: { mode: 'ignore', label: { en: 'Toy rules', ru: 'Игрушечные правила' } },",
  },
  {
    file: 'domain/migration/companions/kinds.ts',
    after: "import { themes } from './themes.ts';",
    line: "import { toyRules } from './toy-rules.ts';",
  },
  { file: 'domain/migration/companions/kinds.ts', after: '  embedded,', line: '  toy_rules: toyRules,' },
];

let scratch: string;

beforeAll(() => {
  scratch = scratchWithRecipe({ prefix: 'companion-kind-recipe-', fixtures, files: FILES, lines: LINES, testInclude: TEST });
});

afterAll(() => removeScratch(scratch));

/** What the copy derives from the registry and the contract, as the probe prints it. */
const PROBE = `
  const { COMPANION_KINDS, COMPANION_KIND_TRAITS, DEFAULT_COMPANION_MODES, companionModes } = await import('./contracts/companions.ts');
  const { COMPANION_KIND_MODULES } = await import('./domain/migration/companions/kinds.ts');
  const { LISTS, READ_RESOURCES, recordingKey, replayClient } = await import('./domain/migration/companions/recording.ts');
  const { companionDocs } = await import('./domain/migration/companions/documents.ts');
  const { replayOf } = await import('./domain/migration/companions/documents-replay.ts');
  const { toYaml } = await import('./lib/git/dashboard-files.ts');
  const { migrateBody } = await import('./api/dashboard-migration/input.ts');
  const { openApiDocument } = await import('./scripts/openapi-document.ts');
  const r = {};
  const put = (resource, method, args, answer) => (r[recordingKey(resource, method, args)] = { answer });
  const meta = { owners: [], roles: [], tags: [], certified_by: null, certification_details: null, params: null, css: null, sql: null };
  put('meta', 'get', ['dashboard', 1], { ...meta, id: 1, uuid: 'd', name: 'Sales', database_id: null, table_name: null });
  put('rls', 'list', [], [{ id: 9, name: 'emea only', filter_type: 'Regular', clause: 'x', group_key: null, roles: [], tables: [] }]);
  const kinds = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'captured']));
  const files = companionDocs({ recording: r, dashboardId: 1, kinds, names: new Map([['toy_rules', new Set(['emea only'])]]), databases: new Map() });
  const bundle = new Map([['dashboards/d.yaml', toYaml({ uuid: 'd', dashboard_title: 'Sales' })], ...Object.entries(files)]);
  const replayed = await replayClient(replayOf(bundle, []).recording).rls.list();
  const doc = openApiDocument();
  const text = JSON.stringify(doc);
  console.log(JSON.stringify({
    kinds: COMPANION_KINDS,
    modules: COMPANION_KIND_MODULES.map((k) => k.kind),
    mode: DEFAULT_COMPANION_MODES.toy_rules,
    asked: companionModes({ toy_rules: 'copy' }).toy_rules,
    label: COMPANION_KIND_TRAITS.toy_rules.label,
    resources: READ_RESOURCES,
    lists: [...LISTS],
    files: Object.keys(files),
    replayed: replayed.map((x) => x.name),
    body: migrateBody.safeParse({ source_env_id: 'a', target_env_id: 'b', dashboard_ids: [1], companions: { toy_rules: 'strict' } }).error?.issues ?? 'ok',
    openapi: text.includes('"toy_rules":{'),
    described: text.includes('toy_rules default to ' + String.fromCharCode(96) + 'ignore'),
  }));`;

describe('the companion-kind recipe', () => {
  it('takes two files and four lines in two more: four files in all', () => {
    const touched = new Set([...Object.keys(FILES), ...LINES.map((l) => l.file)]);
    expect(touched.size).toBeLessThanOrEqual(5);
    expect([...new Set(LINES.map((l) => l.file))].sort()).toEqual(['contracts/companions.ts', 'domain/migration/companions/kinds.ts']);
    for (const file of new Set(LINES.map((l) => l.file))) {
      const before = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
      const after = fs.readFileSync(path.join(scratch, file), 'utf8').split('\n');
      expect(after.filter((l) => !LINES.some((i) => i.file === file && i.line === l))).toEqual(before);
    }
  });

  it('typechecks with nothing else edited: the registry, the contract and the module hold to each other', async () => {
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    const result = await run(tsc, ['--noEmit', '-p', path.join(scratch, 'tsconfig.json')], { cwd: scratch }).then(
      () => '',
      (err: { stdout?: string; message: string }) => err.stdout || err.message,
    );
    expect(result).toBe('');
  }, 300_000);

  it('is picked up by what is derived: registry, defaults, request schema, OpenAPI, recorded reads, documents', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROBE], {
      cwd: scratch,
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
    expect(seen.kinds.at(-1)).toBe('toy_rules');
    expect(seen.modules).toEqual(seen.kinds);
    expect(seen.mode).toBe('ignore');
    expect(seen.asked).toBe('copy');
    expect(seen.label).toEqual({ en: 'Toy rules', ru: 'Игрушечные правила' });
    expect(seen.resources).toContain('rls');
    expect(seen.lists).toContain('rls.list');
    expect(seen.files).toContain('companions/toy_rules/emea only.yaml');
    expect(seen.replayed).toEqual(['emea only']);
    expect(seen.body).toBe('ok');
    expect(seen.openapi).toBe(true);
    expect(seen.described).toBe(true);
  }, 120_000);
});
