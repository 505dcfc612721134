/**
 * Sizes of the project's source: lines per file and per function, functions found by a real
 * TypeScript parser (swc, which the Temporal worker already bundles workflows with), functions
 * inside factories and closures included. `node scripts/code-size.ts` prints what is over the
 * limits; test/platform/code-size.test.ts holds the tree to them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseSync } from '@swc/core';

export const MAX_FILE_LINES = 500;
export const MAX_FUNCTION_LINES = 60;

/** Where the project's own source lives (tests and generated files are not held to the limits). */
export const SOURCE_DIRS = [
  'api',
  'activities',
  'domain',
  'workflows',
  'contracts',
  'db',
  'lib',
  'worker',
  'cli',
  'client',
  'scripts',
  'bench',
  'web/src',
];

export interface Oversize {
  kind: 'file' | 'function';
  /** `path` for a file, `path#name` for a function (the name its declaration, variable or key gives it). */
  key: string;
  lines: number;
}

const FUNCTION_NODES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'MethodProperty',
  'Constructor',
  'GetterProperty',
  'SetterProperty',
]);

type Node = { type?: string; span?: { start: number; end: number }; [k: string]: unknown };

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist') walk(p);
      } else if (/\.(ts|tsx|mts|cts)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
  return out.sort();
}

/** The name a function node goes by: its own identifier, else the variable or property holding it. */
function nameOf(n: Node, inherited: string | undefined): string | undefined {
  const id = (x: unknown) => (x && typeof x === 'object' && 'value' in x ? String((x as { value: unknown }).value) : undefined);
  if (n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression') return id(n.identifier) ?? inherited;
  if (n.type === 'VariableDeclarator') return id(n.id) ?? inherited;
  if (typeof n.type === 'string' && /Property$|Method$/.test(n.type)) return id(n.key) ?? inherited;
  if (n.type === 'Constructor') return 'constructor';
  return inherited;
}

/** Every file and function of one source text over the limits. */
export function oversizeIn(rel: string, text: string): Oversize[] {
  const out: Oversize[] = [];
  const lines = text.split('\n').length;
  if (lines > MAX_FILE_LINES) out.push({ kind: 'file', key: rel, lines });
  // swc's spans are positions in its source map, and a module's span starts at its first token, not
  // at the text's first byte: a leading `;` makes the two the same (the text then starts one past it).
  const mod = parseSync(`;${text}`, { syntax: 'typescript', tsx: rel.endsWith('x'), target: 'es2022' }) as unknown as Node & {
    body: Node[];
  };
  const base = mod.span!.start + 1;
  const bytes = Buffer.from(text);
  const lineStarts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) lineStarts.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const visit = (n: unknown, inherited: string | undefined): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) {
      for (const x of n) visit(x, inherited);
      return;
    }
    const node = n as Node;
    const name = nameOf(node, inherited);
    if (node.type && FUNCTION_NODES.has(node.type) && node.span) {
      const length = lineOf(node.span.end - base) - lineOf(node.span.start - base) + 1;
      if (length > MAX_FUNCTION_LINES) out.push({ kind: 'function', key: `${rel}#${name ?? '(anonymous)'}`, lines: length });
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'span') visit(v, name);
  };
  visit(mod.body, undefined);
  return out;
}

/** Everything in the project's source over the limits. */
export function oversize(root: string): Oversize[] {
  return sourceFiles(root).flatMap((f) => oversizeIn(path.relative(root, f), fs.readFileSync(f, 'utf8')));
}

if (import.meta.main) {
  for (const o of oversize(path.resolve(import.meta.dirname, '..'))) console.log(`${o.kind}\t${o.lines}\t${o.key}`);
}
