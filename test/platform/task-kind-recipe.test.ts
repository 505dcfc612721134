// The task-kind recipe (docs/layout.md, "Adding a task kind"), walked in a scratch copy of the
// tree: a toy kind's five files (test/platform/fixtures/task-kind-recipe/) and one import and one
// entry in each of four index files, nothing else. The registries are static consts, so a kind
// cannot be added from a test at run time; instead the copy must typecheck (which holds the
// route's kind, the workflow's export and its activities to the registries) and its derived lists
// (task types, the task list's filter, the OpenAPI document, the route's permission) must name
// the toy kind without having been edited.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT as root, removeScratch, scratchWithRecipe } from '../support/recipe-scratch.ts';

const run = promisify(execFile);
const fixtures = path.join(import.meta.dirname, 'fixtures', 'task-kind-recipe');

/** The recipe's files: written whole. */
const FILES: Record<string, string> = {
  'contracts/toy.ts': 'contract.ts.txt',
  'activities/toy/index.ts': 'activities.ts.txt',
  'workflows/toy.ts': 'workflow.ts.txt',
  'api/toy/routes.ts': 'routes.ts.txt',
  'test/toy/toy.test.ts': 'test.ts.txt',
};

/** The recipe's index lines: each inserted after an anchor line that is there today. */
const INDEX_LINES: Array<{ file: string; after: string; line: string }> = [
  {
    file: 'contracts/task-kinds.ts',
    after: "import type { ValidateInput } from './validation.ts';",
    line: "import { toyKind } from './toy.ts';",
  },
  { file: 'contracts/task-kinds.ts', after: '  validate,', line: '  toy: toyKind,' },
  {
    file: 'activities/index.ts',
    after: "import { createValidationActivities } from './validation/index.ts';",
    line: "import { createToyActivities } from './toy/index.ts';",
  },
  { file: 'activities/index.ts', after: '    ...createValidationActivities(deps),', line: '    ...createToyActivities(deps),' },
  {
    file: 'workflows/index.ts',
    after: "export { validateWorkflow } from './validate.ts';",
    line: "export { toyWorkflow } from './toy.ts';",
  },
  {
    file: 'api/app.ts',
    after: "import { validationRoutes } from './validation/routes.ts';",
    line: "import { toyRoutes } from './toy/routes.ts';",
  },
  { file: 'api/app.ts', after: '    ...validationRoutes(app),', line: '    ...toyRoutes(app),' },
];

let scratch: string;

beforeAll(() => {
  scratch = scratchWithRecipe({ prefix: 'task-kind-recipe-', fixtures, files: FILES, lines: INDEX_LINES, testInclude: 'test/toy' });
});

afterAll(() => removeScratch(scratch));

describe('the task-kind recipe', () => {
  it('takes five files and one import and one entry in each of four index files', () => {
    expect(Object.keys(FILES)).toHaveLength(5);
    const perIndex = Object.groupBy(INDEX_LINES, (l) => l.file);
    expect(Object.keys(perIndex).sort()).toEqual(['activities/index.ts', 'api/app.ts', 'contracts/task-kinds.ts', 'workflows/index.ts']);
    for (const lines of Object.values(perIndex)) expect(lines!.length).toBeLessThanOrEqual(2);
    // Nothing else in the copy differs from the tree: every other index line is still what it was.
    for (const file of Object.keys(perIndex)) {
      const before = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
      const after = fs.readFileSync(path.join(scratch, file), 'utf8').split('\n');
      expect(after.filter((l) => !INDEX_LINES.some((i) => i.file === file && i.line === l))).toEqual(before);
    }
  });

  it('typechecks with nothing else edited: the registries hold the route, workflow and activities to it', async () => {
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    const result = await run(tsc, ['--noEmit', '-p', path.join(scratch, 'tsconfig.json')], { cwd: scratch }).then(
      () => '',
      (err: { stdout?: string; message: string }) => err.stdout || err.message,
    );
    expect(result).toBe('');
  }, 300_000);

  it('is picked up by what is derived from the registry: task types, list filter, permission, OpenAPI', async () => {
    const probe = `
      const { TASK_KINDS, TASK_TYPES } = await import('./contracts/task-kinds.ts');
      const { taskListQuery } = await import('./api/tasks/schemas.ts');
      const { taskAccess } = await import('./api/tasks/routes.ts');
      const { openApiDocument } = await import('./scripts/openapi-document.ts');
      const doc = openApiDocument();
      const list = doc.paths['/api/tasks'].get.parameters.find((p) => p.name === 'task_type');
      const post = doc.paths['/api/environments/{env_id}/toy']?.post;
      console.log(JSON.stringify({
        types: TASK_TYPES,
        kind: { type: TASK_KINDS.toy.type, workflow: TASK_KINDS.toy.workflow },
        filter: taskListQuery.safeParse({ task_type: 'toy' }).success,
        access: taskAccess('toy'),
        listEnum: list?.schema?.enum,
        route: post ? { responses: Object.keys(post.responses), description: post.description } : null,
      }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], {
      cwd: scratch,
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
    expect(seen.types).toContain('toy');
    expect(seen.types.at(-1)).toBe('toy');
    expect(seen.kind).toEqual({ type: 'toy', workflow: 'toyWorkflow' });
    expect(seen.filter).toBe(true);
    expect(seen.access).toEqual({ permission: 'dashboards:READ' });
    expect(seen.listEnum).toContain('toy');
    expect(seen.route.responses).toEqual(expect.arrayContaining(['202', '404']));
    expect(seen.route.description).toContain('dashboards:READ');
  }, 120_000);
});
