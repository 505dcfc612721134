/**
 * Renaming a schema or catalog where a query names it (`analytics_dev.orders` → `analytics.orders`),
 * by the dialect's own parser: PostgreSQL's (libpg-query) and its deparser, or node-sql-parser's
 * grammar for MySQL, MariaDB and SQLite. Only qualifiers of table references and qualified column
 * references change; a string literal or a comment that happens to hold the name does not. What a
 * parser cannot read is answered as such and never rewritten by text.
 *
 * A rewritten query is the deparser's rendering (comments and layout are not kept); a query the
 * rule does not touch is returned as it was written.
 *
 * The new name is written into the tree, never into text, and the renderer quotes it; but
 * node-sql-parser's renderer does not escape a quote inside a name, so the name must first pass
 * the one identifier decider (./identifier.ts), and the rendering is then read back and must be
 * the same statements as before but for the renamed qualifier. Either refusal is `refused`: the
 * rule, not the query, is at fault, and nothing it rewrote may be written anywhere.
 */
import { createRequire } from 'node:module';
import { loadModule, parseSync } from 'libpg-query';
import { deparseSync } from 'pgsql-deparser';
import { identifierProblem } from './identifier.ts';
import { withoutPositions } from './postgres.ts';

export type QualifierDialect = 'postgresql' | 'mysql' | 'mariadb' | 'sqlite';
export type QualifierLevel = 'schema' | 'catalog';

/** `refused`: the rule's name or the rewrite's rendering is unsafe (not merely SQL the parser cannot read). */
export type Renamed = { ok: true; sql: string; count: number } | { ok: false; reason: string; refused?: true };

// The WebAssembly parser is loaded once, when this module is first imported, so the rewrite is synchronous.
await loadModule();

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

/** Renames `from` to `to` at `level` in `sql`; count 0 (and the text unchanged) when nothing names it. */
export function renameQualifier(dialect: QualifierDialect, sql: string, level: QualifierLevel, from: string, to: string): Renamed {
  const problem = identifierProblem(to);
  if (problem) return { ok: false, refused: true, reason: `the rule's new ${level} name ${problem}` };
  return dialect === 'postgresql' ? renamePostgres(sql, level, from, to) : renameNodeSql(dialect, sql, level, from, to);
}

function renamePostgres(sql: string, level: QualifierLevel, from: string, to: string): Renamed {
  let tree: { version: number; stmts: Array<{ stmt?: Node }> };
  try {
    tree = parseSync(sql) as never;
  } catch (err) {
    return { ok: false, reason: `PostgreSQL's parser cannot read it: ${(err as Error).message.slice(0, 300)}` };
  }
  let count = 0;
  for (const node of objects(tree.stmts)) {
    const rv = node.RangeVar as Node | undefined;
    const key = level === 'schema' ? 'schemaname' : 'catalogname';
    if (rv && rv[key] === from) {
      rv[key] = to;
      count++;
    }
    // a.b.c names schema.table.column, a.b.c.d catalog.schema.table.column.
    const fields = (node.ColumnRef as Node | undefined)?.fields as Node[] | undefined;
    const at = fields?.length === 3 ? (level === 'schema' ? 0 : -1) : fields?.length === 4 ? (level === 'schema' ? 1 : 0) : -1;
    const name = at >= 0 ? (fields![at]!.String as Node | undefined) : undefined;
    if (name && name.sval === from) {
      name.sval = to;
      count++;
    }
  }
  if (count === 0) return { ok: true, sql, count };
  let rendered: string;
  try {
    rendered = deparseSync(tree as never, { pretty: true });
  } catch (err) {
    return { ok: false, reason: `could not be rendered back to SQL: ${(err as Error).message.slice(0, 300)}` };
  }
  return samePostgresTree(tree.stmts, rendered) ? { ok: true, sql: rendered, count } : notTheSame(level);
}

/** The rendering read back is the renamed tree itself: as many statements, nothing else changed. */
function samePostgresTree(renamed: unknown[], rendered: string): boolean {
  try {
    const again = parseSync(rendered) as { stmts: unknown[] };
    return (
      again.stmts.length === renamed.length && JSON.stringify(withoutPositions(again.stmts)) === JSON.stringify(withoutPositions(renamed))
    );
  } catch {
    // expected: SQL the parser cannot read again is not proven renamed: false keeps the original.
    return false;
  }
}

function notTheSame(level: QualifierLevel): Renamed {
  return {
    ok: false,
    refused: true,
    reason: `the query with the ${level} renamed does not read back as the same statements with only the ${level} changed`,
  };
}

interface Parser {
  astify(sql: string, opt: { database: string }): unknown;
  sqlify(ast: unknown, opt: { database: string }): string;
}

const require = createRequire(import.meta.url);
const parsers = new Map<string, Parser>();
function parserFor(dialect: Exclude<QualifierDialect, 'postgresql'>): Parser {
  let p = parsers.get(dialect);
  if (!p) {
    const mod = require(`node-sql-parser/build/${dialect}.js`) as { Parser: new () => Parser };
    p = new mod.Parser();
    parsers.set(dialect, p);
  }
  return p;
}

/**
 * node-sql-parser's tree names a table's qualifier `db` (MySQL's database is its schema; SQLite's
 * attached database likewise); these dialects have no catalog level, so a catalog rule finds nothing.
 */
function renameNodeSql(
  dialect: Exclude<QualifierDialect, 'postgresql'>,
  sql: string,
  level: QualifierLevel,
  from: string,
  to: string,
): Renamed {
  const parser = parserFor(dialect);
  let ast: unknown;
  try {
    ast = parser.astify(sql, { database: dialect });
  } catch (err) {
    return { ok: false, reason: `the ${dialect} parser cannot read it: ${(err as Error).message.slice(0, 300)}` };
  }
  if (level === 'catalog') return { ok: true, sql, count: 0 };
  const count = forEachQualifier(ast, (name) => (name === from ? to : undefined));
  if (count === 0) return { ok: true, sql, count };
  let rendered: string;
  try {
    rendered = parser.sqlify(ast, { database: dialect }).trim();
  } catch (err) {
    return { ok: false, reason: `could not be rendered back to SQL: ${(err as Error).message.slice(0, 300)}` };
  }
  return sameButQualifier(dialect, sql, rendered, from, to) ? { ok: true, sql: rendered, count } : notTheSame(level);
}

/** Calls `rename` with each table qualifier's name; a string it answers replaces the name. Answers how many it replaced. */
function forEachQualifier(ast: unknown, rename: (name: string) => string | undefined): number {
  let count = 0;
  for (const node of objects(ast)) {
    if (typeof node.table !== 'string' && typeof (node.table as Node | null)?.value !== 'string') continue;
    if (!('db' in node)) continue;
    const db = node.db as unknown;
    const name = typeof db === 'string' ? db : ((db as Node | null)?.value as string | undefined);
    const next = name === undefined ? undefined : rename(name);
    if (next === undefined) continue;
    if (typeof db === 'string') node.db = next;
    else (db as Node).value = next;
    count++;
  }
  return count;
}

/**
 * Whether `rendered` (the rewrite of `original`) reads as the same statements with only the
 * qualifier `from` become `to`. node-sql-parser's trees are compared after one rendering each,
 * since its reader and renderer disagree on incidentals (a name's quoting); its lists of
 * referenced names are left out, and `from` and `to` both read as one placeholder.
 */
export function sameButQualifier(
  dialect: Exclude<QualifierDialect, 'postgresql'>,
  original: string,
  rendered: string,
  from: string,
  to: string,
): boolean {
  const parser = parserFor(dialect);
  const opt = { database: dialect };
  const normal = (sql: string): string => {
    const ast = parser.astify(sql, opt);
    const tree = parser.astify(parser.sqlify(ast, opt), opt);
    forEachQualifier(tree, (name) => (name === from || name === to ? '\u0000qualifier' : undefined));
    const stmts = Array.isArray(tree) ? tree : [tree];
    return `${stmts.length}:${JSON.stringify(stmts, (k, v: unknown) => (k === 'tableList' || k === 'columnList' ? undefined : v))}`;
  };
  try {
    return normal(original) === normal(rendered);
  } catch {
    // expected: SQL the parser cannot read is not proven the same.
    return false;
  }
}

/**
 * The dialect of a database from its SQLAlchemy URI's scheme (`postgresql+psycopg2://…` →
 * postgresql), read with the WHATWG URL parser; null for a backend without a parser here.
 */
export function dialectOfUri(uri: unknown): QualifierDialect | null {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return null;
  const scheme = new URL(uri).protocol.replace(/:$/, '').split('+')[0]!.toLowerCase();
  if (scheme === 'postgresql' || scheme === 'postgres') return 'postgresql';
  if (scheme === 'mysql' || scheme === 'mariadb' || scheme === 'sqlite') return scheme;
  return null;
}
