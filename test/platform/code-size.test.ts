import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_FUNCTION_LINES, oversize, oversizeIn } from '../../scripts/code-size.ts';

/**
 * No source file over 500 lines and no function over 60, counted by a real parser (swc), inner
 * functions of factories included. Two kinds of place are allowed, each with its reason:
 * declarative tables (a domain's route table: one defineRoute per endpoint; a schema migration:
 * one statement per table) and the debt below, each entry at most the size it had when the rule
 * came (issues 35 and 48). The debt only shrinks: an entry that grows fails, and one that is no longer
 * over the limit must be removed, so the list says what is left to split.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

const DECLARATIVE: Array<{ pattern: RegExp; reason: string }> = [
  {
    pattern: /^api\/.*routes\.ts#\w+Routes$/,
    reason: 'a route table: one declarative defineRoute per endpoint (handlers are one-liners into services)',
  },
  {
    pattern: /^db\/migrations\/[^/]+\.ts#(up|down)$/,
    reason: 'a schema migration: the tables as they are created, never edited after release',
  },
];

// Functions over the style rule's 60 lines when the limit came down from 100 (issue 48), at their size then,
// re-measured once when prettier's formatting came into npm test (issue 49): formatting changed their line count, not their content.
const DEBT: Record<string, number> = {
  'domain/migration/import.ts#importTogether': 88,
  'domain/migration/plan-one.ts#compareAndSettle': 92,
  'domain/migration/plan.ts#remapOnto': 80,
  'domain/migration/rls-step.ts#checkDashboardRls': 70,
  'domain/migration/superset-upstream.ts#supersetUpstream': 76,
  'domain/datasets/safe-write.ts#writeDataset': 79,
};

const allowed = (key: string) => DECLARATIVE.some((d) => d.pattern.test(key));

describe('code size', () => {
  const found = oversize(ROOT).filter((o) => !allowed(o.key));

  it('no file over 500 lines and no function over 60 lines, but the declarative tables and the shrinking debt', () => {
    const over = found.filter((o) => !(o.key in DEBT) || o.lines > DEBT[o.key]!).map((o) => `${o.key}: ${o.lines} lines`);
    expect(over, 'split these (or, for a declarative table, say why in DECLARATIVE)').toEqual([]);
  });

  it('the debt only shrinks: entries no longer over the limit are removed', () => {
    const still = new Set(found.map((o) => o.key));
    expect(Object.keys(DEBT).length).toBeGreaterThan(0); // else this case checks nothing: remove it with the last entry
    expect(Object.keys(DEBT).filter((k) => !still.has(k))).toEqual([]);
  });

  it('flags the fixture: a function of 61 lines, a file of 501, and not a function of 60', () => {
    const fixture = fs.readFileSync(path.join(import.meta.dirname, 'fixtures/oversize.ts.txt'), 'utf8');
    const found = oversizeIn('lib/oversize.ts', fixture);
    expect(found).toEqual([
      { kind: 'file', key: 'lib/oversize.ts', lines: 501 },
      { kind: 'function', key: 'lib/oversize.ts#sixtyOneLines', lines: 61 },
    ]);
    expect(MAX_FUNCTION_LINES).toBe(60);
  });

  it('counts functions inside factories and closures', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `    const v${i} = ${i};`).join('\n');
    const text = `export function createThings() {\n  return {\n    async work() {\n${body}\n    },\n  };\n}\n`;
    const keys = oversizeIn('lib/x.ts', text).map((o) => o.key);
    expect(keys).toContain('lib/x.ts#work');
    expect(keys).toContain('lib/x.ts#createThings');
    expect(oversizeIn('lib/y.ts', 'export const f = () => 1;\n')).toEqual([]);
  });
});
