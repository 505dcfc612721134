/**
 * The MySQL, MariaDB and SQLite dialects, read by node-sql-parser's grammar for each. What is
 * sent on is the parser's rendering of the tree it checked (comments, MySQL's executable
 * `/*! … *\/` comments among them, are not in it), read back to prove it is the same tree.
 * The grammar copies a literal's text as written, and the engines disagree about a backslash in
 * one (SQLite: an ordinary character; MySQL: an escape, unless sql_mode has NO_BACKSLASH_ESCAPES),
 * so a literal or name holding a backslash is refused: without one, every reader agrees where
 * each literal ends.
 */
import { createRequire } from 'node:module';
import { READ_ONLY_FUNCTIONS, RECURSIVE_CTE, unboundedCall } from './functions.ts';
import { type Checked, refused } from './verdict.ts';

export type NodeSqlDialect = 'mysql' | 'mariadb' | 'sqlite';

interface Parser {
  astify(sql: string, opt: { database: string }): unknown;
  sqlify(ast: unknown, opt: { database: string }): string;
}

// One grammar per dialect (the package's per-dialect builds), loaded when first needed.
const require = createRequire(import.meta.url);
const parsers = new Map<NodeSqlDialect, Parser>();
function parserFor(dialect: NodeSqlDialect): Parser {
  let p = parsers.get(dialect);
  if (!p) {
    const mod = require(`node-sql-parser/build/${dialect}.js`) as { Parser: new () => Parser };
    p = new mod.Parser();
    parsers.set(dialect, p);
  }
  return p;
}

const NAMES: Record<NodeSqlDialect, string> = { mysql: 'MySQL', mariadb: 'MariaDB', sqlite: 'SQLite' };

/** Statement kinds node-sql-parser knows; only `select` reads. */
const STATEMENTS = new Set(
  (
    'insert replace update delete merge create drop alter truncate rename use set lock unlock grant revoke call show desc ' +
    'describe explain load_data transaction attach detach pragma vacuum analyze reindex declare exec execute go if raise ' +
    'copy prepare deallocate handler flush kill purge reset optimize repair checksum do release savepoint rollback commit begin'
  ).split(' '),
);

/** Literal kinds whose value a query's shape leaves out (identifiers stay: they are structure). */
const LITERALS = new Set([
  'single_quote_string',
  'double_quote_string',
  'natural_string',
  'hex_string',
  'full_hex_string',
  'bit_string',
  'number',
  'bigint',
  'bool',
  'string',
  'date',
  'time',
  'timestamp',
  'datetime',
]);

type Node = Record<string, unknown>;

function* objects(v: unknown): Generator<Node> {
  if (Array.isArray(v)) {
    for (const x of v) yield* objects(x);
    return;
  }
  if (!v || typeof v !== 'object') return;
  yield v as Node;
  for (const x of Object.values(v)) yield* objects(x);
}

const partName = (p: unknown) => String((p as Node | null)?.value ?? p ?? '');

function functionOf(node: Node): { name: string; qualified: boolean } | undefined {
  if (node.type === 'aggr_func') return { name: String(node.name).toLowerCase(), qualified: false };
  if (node.type !== 'function') return undefined;
  const n = node.name as Node | string;
  if (typeof n === 'string') return { name: n.toLowerCase(), qualified: false };
  const parts = ((n.name as unknown[] | undefined) ?? []).map(partName);
  return { name: parts.join('.').toLowerCase(), qualified: !!n.schema || parts.length !== 1 };
}

function problemOf(dialect: NodeSqlDialect, ast: Node): string | undefined {
  if (ast.type !== 'select') return `must be a SELECT (or WITH … SELECT) query; this is ${String(ast.type ?? 'unknown').toUpperCase()}`;
  for (const node of objects(ast)) {
    if (typeof node.type === 'string' && STATEMENTS.has(node.type)) return `may only read: it contains ${node.type.toUpperCase()}`;
    if (node.ast && typeof node.ast === 'object' && (node.ast as Node).type !== 'select')
      return 'may only read: it contains a statement other than SELECT';
    const into = node.into as Node | null | undefined;
    if (into && into.position) return 'may only read: SELECT … INTO writes a table, a file or variables';
    if (node.locking_read || node.for_update) return 'may only read: FOR UPDATE / LOCK IN SHARE MODE lock rows';
    if (node.type === 'assign') return 'may only read: it assigns a variable';
    if (node.recursive === true) return RECURSIVE_CTE;
    const fn = functionOf(node);
    const unbounded = fn && unboundedCall(dialect, fn.name);
    if (unbounded) return `may not call ${unbounded}`;
    if (fn && (fn.qualified || !READ_ONLY_FUNCTIONS[dialect].has(fn.name))) {
      return `may only call ${NAMES[dialect]}'s built-in functions that only compute a value; ${fn.name}() is not one`;
    }
    for (const v of Object.values(node)) {
      if (typeof v === 'string' && v.includes('\\'))
        return `may not hold a backslash in a literal or name (${NAMES[dialect]} and Superset read it differently)`;
    }
  }
  return undefined;
}

function astOf(dialect: NodeSqlDialect, sql: string): Node[] | string {
  try {
    const ast = parserFor(dialect).astify(sql, { database: dialect });
    return (Array.isArray(ast) ? ast : [ast]) as Node[];
  } catch (err) {
    return `is not valid ${NAMES[dialect]} SQL as node-sql-parser reads it: ${(err as Error).message.slice(0, 300)}`;
  }
}

export function checkNodeSql(dialect: NodeSqlDialect, sql: string): Checked {
  const tree = astOf(dialect, sql);
  if (typeof tree === 'string') return refused(tree);
  if (tree.length === 0) return refused('is empty');
  if (tree.length > 1) return refused(`must be a single statement; ${NAMES[dialect]} reads ${tree.length}`);
  const problem = problemOf(dialect, tree[0]!);
  if (problem) return refused(problem);
  // The text sent on is the rendering; so the tree that counts is the rendering's, which must be
  // one statement passing the same checks and render to itself again.
  const rendered = render(dialect, tree[0]!);
  const again = astOf(dialect, rendered);
  const sent = typeof again === 'string' || again.length !== 1 ? undefined : again[0]!;
  if (!sent || render(dialect, sent) !== rendered)
    return refused(`could not be rendered back to SQL that ${NAMES[dialect]} reads the same way`);
  const problemSent = problemOf(dialect, sent);
  return problemSent ? refused(problemSent) : { ok: true, sql: rendered };
}

function render(dialect: NodeSqlDialect, ast: Node): string {
  return parserFor(dialect).sqlify(ast, { database: dialect }).trim();
}

/** The query's shape: its tree with every literal's value left out. */
export function nodeSqlShape(dialect: NodeSqlDialect, sql: string): string {
  const tree = astOf(dialect, sql);
  if (typeof tree === 'string') throw new Error(tree);
  return JSON.stringify(tree, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) && LITERALS.has(String((v as Node).type)) && 'value' in (v as Node)
      ? { ...(v as Node), value: '?' }
      : v,
  );
}
