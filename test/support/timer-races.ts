// Finds, with a real TypeScript parser (swc), the two ways a test lets the wall clock decide its
// outcome: a `Promise.race` or `Promise.any` one of whose contenders is a timer (`setTimeout`, a
// `sleep`/`delay` call, `setTimeout` of node:timers/promises under any name, `AbortSignal.timeout`,
// or a variable of the same function or file built from one), and a comparison of the clock
// (`Date.now()`, `performance.now()`, `new Date()`, `process.hrtime`, or a variable computed from
// one, an elapsed time or a deadline: `Date.now() - t0`, `Date.now() + 5000`) by `<`, `>`, `<=`,
// `>=`, or an `expect(…)` of it against `toBeLessThan`/`toBeGreaterThan`…. A race of events alone,
// a timer outside a race (a poll's interval) and a stamp that is only recorded are not findings.
// test/platform/no-timer-races.test.ts holds test/ to it.
import { parseSync } from '@swc/core';

export interface TimerFinding {
  kind: 'timer race' | 'wall-clock comparison';
  /** `path#function` (the innermost named function holding it; `path#(top level)` outside any). */
  where: string;
  line: number;
}

type Node = { type?: string; span?: { start: number; end: number }; [k: string]: unknown };

const TIMER_CALLEES = new Set(['setTimeout', 'sleep', 'delay']);
const COMPARISONS = new Set(['<', '>', '<=', '>=']);
const ORDER_MATCHERS = new Set(['toBeLessThan', 'toBeLessThanOrEqual', 'toBeGreaterThan', 'toBeGreaterThanOrEqual']);

const ident = (n: unknown): string | undefined =>
  n && typeof n === 'object' && (n as Node).type === 'Identifier' ? String((n as { value: unknown }).value) : undefined;

/** `a.b` as ['a', 'b'] for a member chain of identifiers (`Date.now`, `Promise.race`, `AbortSignal.timeout`). */
function memberPath(n: unknown): string[] | undefined {
  const node = n as Node;
  if (ident(node)) return [ident(node)!];
  if (node?.type !== 'MemberExpression') return undefined;
  const obj = memberPath(node.object);
  const prop = ident(node.property);
  return obj && prop ? [...obj, prop] : undefined;
}

function calleeName(call: Node): string | undefined {
  const p = memberPath(call.callee);
  return p?.join('.');
}

/** Every node under `n` (itself included), depth first. */
function* walk(n: unknown): Generator<Node> {
  if (!n || typeof n !== 'object') return;
  if (Array.isArray(n)) {
    for (const x of n) yield* walk(x);
    return;
  }
  const node = n as Node;
  if (node.type) yield node;
  for (const [k, v] of Object.entries(node)) if (k !== 'span') yield* walk(v);
}

const CLOCK_CALLEES = new Set(['Date.now', 'performance.now', 'process.hrtime', 'process.hrtime.bigint']);
/** A read of the clock: `Date.now()` and the like, or `new Date()` with no argument (now). */
const isClockRead = (n: Node) =>
  (n.type === 'CallExpression' && CLOCK_CALLEES.has(calleeName(n) ?? '')) ||
  (n.type === 'NewExpression' && ident(n.callee) === 'Date' && !(n.arguments as unknown[] | undefined)?.length);
/** Whether `n` reads the clock, directly or through a name of `derived` (an elapsed time, a deadline). */
const readsClock = (n: unknown, derived: Set<string> = new Set()) =>
  [...walk(n)].some((x) => isClockRead(x) || (ident(x) !== undefined && derived.has(ident(x)!)));
/** Arithmetic on the clock (`Date.now() - t0`, `Date.now() + ms`): a duration or a deadline, not a stamp. */
const computesFromClock = (n: unknown, derived: Set<string>) =>
  [...walk(n)].some((x) => x.type === 'BinaryExpression' && ['-', '+'].includes(String(x.operator)) && readsClock(x, derived));

/** Local names of node:timers/promises' setTimeout (`import { setTimeout as wait } from 'node:timers/promises'`). */
function timerImports(body: Node[]): Set<string> {
  const names = new Set<string>();
  for (const x of body) {
    if (x.type !== 'ImportDeclaration' || !/^(node:)?timers\/promises$/.test(String((x.source as Node & { value?: unknown })?.value)))
      continue;
    for (const spec of (x.specifiers as Node[]) ?? []) {
      const imported = ident(spec.imported) ?? ident(spec.local);
      if (imported === 'setTimeout' && ident(spec.local)) names.add(ident(spec.local)!);
    }
  }
  return names;
}

/** Whether `n` holds a timer: a timer call (`aliases`: imported names of one), or a name of `timers` (variables built from one). */
function holdsTimer(n: unknown, timers: Set<string>, aliases: Set<string> = new Set()): boolean {
  for (const x of walk(n)) {
    if (x.type === 'CallExpression') {
      const name = calleeName(x);
      const last = name?.split('.').at(-1);
      if (name === 'AbortSignal.timeout' || (last && (TIMER_CALLEES.has(last) || aliases.has(last)))) return true;
    }
    const id = ident(x);
    if (id && timers.has(id)) return true;
  }
  return false;
}

function nameOf(n: Node, inherited: string | undefined): string | undefined {
  if (n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression') return ident(n.identifier) ?? inherited;
  if (n.type === 'VariableDeclarator') return ident(n.id) ?? inherited;
  if (typeof n.type === 'string' && /Property$|Method$/.test(n.type)) return ident(n.key) ?? inherited;
  return inherited;
}

/** The timer races and wall-clock comparisons of one source text. */
export function timerFindings(rel: string, text: string): TimerFinding[] {
  // A leading `;` is the module's first token, so its span's start is where the text begins (swc's
  // offsets are positions in a source map, not in the text) and the text's offsets follow it.
  const mod = parseSync(`;${text}`, { syntax: 'typescript', tsx: rel.endsWith('x'), target: 'es2022' }) as unknown as Node & {
    body: Node[];
  };
  const base = mod.span!.start + 1;
  const bytes = Buffer.from(text);
  const lineOf = (offset: number) => bytes.subarray(0, offset).toString().split('\n').length;
  // Names bound to a timer anywhere in the file (a `bound`, a `late`): a race naming one races the clock.
  // Names computed from the clock (an `elapsed`, a `deadline`): comparing one compares the clock.
  const aliases = timerImports(mod.body);
  const timers = new Set<string>();
  const derived = new Set<string>();
  for (let grew = true; grew;) {
    grew = false;
    for (const x of walk(mod.body)) {
      const id = x.type === 'VariableDeclarator' ? ident(x.id) : undefined;
      if (!id || !x.init) continue;
      for (const [names, holds] of [
        [timers, () => holdsTimer(x.init, timers, aliases)],
        [derived, () => computesFromClock(x.init, derived)],
      ] as const) {
        if (names.has(id) || !holds()) continue;
        names.add(id);
        grew = true;
      }
    }
  }
  const out: TimerFinding[] = [];
  const visit = (n: unknown, fn: string | undefined): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) return n.forEach((x) => visit(x, fn));
    const node = n as Node;
    const named = nameOf(node, fn);
    const found = (kind: TimerFinding['kind']) =>
      out.push({ kind, where: `${rel}#${named ?? '(top level)'}`, line: node.span ? lineOf(node.span.start - base) : 0 });
    const racer = node.type === 'CallExpression' && ['Promise.race', 'Promise.any'].includes(calleeName(node) ?? '');
    if (racer && holdsTimer(node.arguments, timers, aliases)) found('timer race');
    const compared = node.type === 'BinaryExpression' && COMPARISONS.has(String(node.operator));
    if (compared && (readsClock(node.left, derived) || readsClock(node.right, derived))) {
      found('wall-clock comparison');
    }
    if (node.type === 'CallExpression' && (node.callee as Node | undefined)?.type === 'MemberExpression') {
      const callee = node.callee as Node;
      const matcher = ident(callee.property);
      const subject = [...walk(callee.object)].find((x) => x.type === 'CallExpression' && calleeName(x) === 'expect');
      if (matcher && ORDER_MATCHERS.has(matcher) && subject && readsClock(subject.arguments, derived)) found('wall-clock comparison');
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'span') visit(v, named);
  };
  visit(mod.body, undefined);
  return out;
}
