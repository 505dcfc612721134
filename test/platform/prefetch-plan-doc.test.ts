import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PREFETCH_PLAN, prefetchPlanTable } from '../../domain/migration/prefetch-plan.ts';

/**
 * The prefetch plan people read (docs/migration-batching.md, "The prefetch plan") is the code's
 * table (domain/migration/prefetch-plan.ts): a read added, renamed or given another consumer
 * without the docs fails here. And no read ahead escapes the plan: the engine holds no `detached(`
 * call, the way a promise is otherwise left un-awaited (lib/detached.ts).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const START = '<!-- prefetch-plan:start -->';
const END = '<!-- prefetch-plan:end -->';

/** The table between the doc's markers. */
function documentedPlan(doc: string): string | null {
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  return from < 0 || to < from ? null : doc.slice(from + START.length, to).trim();
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('the prefetch plan in the docs', () => {
  it("docs/migration-batching.md holds the code's table, row for row", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/migration-batching.md'), 'utf8');
    expect(documentedPlan(doc), 'paste prefetchPlanTable() between the markers').toBe(prefetchPlanTable());
  });

  it('names every read of the plan once, and notices a drifted row', () => {
    const table = prefetchPlanTable();
    for (const name of Object.keys(PREFETCH_PLAN)) expect(table.split(`| \`${name}\` |`)).toHaveLength(2);
    const drifted = `${START}\n${table.replace('awaited as the batch ends', 'left running')}\n${END}`;
    expect(documentedPlan(drifted)).not.toBe(table);
    expect(documentedPlan('no markers')).toBeNull();
  });

  it('leaves no promise of the domain layer detached: its reads ahead go through the plan', () => {
    const detachedCalls = sourceFiles(path.join(ROOT, 'domain')).flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bdetached\(/.test(line) ? [`${path.relative(ROOT, f)}:${i + 1}`] : [])),
    );
    expect(detachedCalls).toEqual([]);
  });
});
