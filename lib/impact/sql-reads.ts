/**
 * What a query reads, by the dialect's own parser: PostgreSQL's (libpg-query) or node-sql-parser's
 * grammar for MySQL, MariaDB and SQLite. The tables it reads (a WITH query's own names are not
 * tables) and the column names it refers to; a `*` is told apart, since it reads every column. SQL a
 * parser cannot read (Jinja templating, another dialect) is answered as such, never guessed at by text.
 */
import { createRequire } from 'node:module';
import { loadModule, parseSync } from 'libpg-query';
import type { QualifierDialect } from '../sql/qualifiers.ts';

export type SqlDialect = QualifierDialect;

export interface TableRef {
  catalog: string | null;
  schema: string | null;
  table: string;
}

export interface SqlReads {
  tables: TableRef[];
  /** Column names referred to, lower-cased, qualifiers left out. */
  columns: string[];
  /** A `*` (or `t.*`) reads every column. */
  star: boolean;
}

export type ReadsOrReason = { ok: true; reads: SqlReads } | { ok: false; reason: string };

// The WebAssembly parser is loaded once, when this module is first imported, so reading is synchronous.
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

const DIALECT_NAMES: Record<SqlDialect, string> = { postgresql: 'PostgreSQL', mysql: 'MySQL', mariadb: 'MariaDB', sqlite: 'SQLite' };

/** The tables and columns `sql` reads; the parser's own message when it cannot read it. */
export function readsOfSql(dialect: SqlDialect, sql: string): ReadsOrReason {
  try {
    return { ok: true, reads: dialect === 'postgresql' ? postgresReads(sql) : nodeSqlReads(dialect, sql) };
  } catch (err) {
    return { ok: false, reason: `${DIALECT_NAMES[dialect]}'s parser cannot read it: ${(err as Error).message.slice(0, 300)}` };
  }
}

/** The columns a SQL expression (an adhoc metric, column or filter) refers to, read as `SELECT <expression>`. */
export function readsOfExpression(dialect: SqlDialect, expression: string): ReadsOrReason {
  return readsOfSql(dialect, `SELECT ${expression}`);
}

function postgresReads(sql: string): SqlReads {
  const tree = parseSync(sql) as { stmts: unknown[] };
  const ctes = new Set<string>();
  for (const node of objects(tree.stmts)) {
    const cte = node.CommonTableExpr as Node | undefined;
    if (typeof cte?.ctename === 'string') ctes.add(cte.ctename);
  }
  const tables: TableRef[] = [];
  const columns = new Set<string>();
  let star = false;
  for (const node of objects(tree.stmts)) {
    const rv = node.RangeVar as Node | undefined;
    if (rv && typeof rv.relname === 'string' && !(rv.schemaname == null && ctes.has(rv.relname))) {
      tables.push({
        catalog: (rv.catalogname as string | undefined) ?? null,
        schema: (rv.schemaname as string | undefined) ?? null,
        table: rv.relname,
      });
    }
    const fields = (node.ColumnRef as Node | undefined)?.fields as Node[] | undefined;
    const last = fields?.[fields.length - 1];
    if (last && 'A_Star' in last) star = true;
    const name = (last?.String as Node | undefined)?.sval;
    if (typeof name === 'string') columns.add(name.toLowerCase());
  }
  return { tables: unique(tables), columns: [...columns], star };
}

interface Parser {
  astify(sql: string, opt: { database: string }): unknown;
  tableList(sql: string, opt: { database: string }): string[];
  columnList(sql: string, opt: { database: string }): string[];
}

const require = createRequire(import.meta.url);
const parsers = new Map<string, Parser>();
function parserFor(dialect: Exclude<SqlDialect, 'postgresql'>): Parser {
  let p = parsers.get(dialect);
  if (!p) {
    const mod = require(`node-sql-parser/build/${dialect}.js`) as { Parser: new () => Parser };
    p = new mod.Parser();
    parsers.set(dialect, p);
  }
  return p;
}

/**
 * node-sql-parser's own lists: tables as `kind::db::table`, columns as `kind::table::column`
 * (`(.*)` for a star). SQLite reads a double-quoted word as a column when one is so named, and the
 * grammar keeps it as a string: those count as column names there.
 */
function nodeSqlReads(dialect: Exclude<SqlDialect, 'postgresql'>, sql: string): SqlReads {
  const parser = parserFor(dialect);
  const opt = { database: dialect };
  const ast = parser.astify(sql, opt);
  const ctes = new Set<string>();
  for (const node of objects(ast)) {
    const w = node.with as Node[] | null | undefined;
    for (const c of Array.isArray(w) ? w : []) {
      const n = (c.name as Node | undefined)?.value ?? c.name;
      if (typeof n === 'string') ctes.add(n);
    }
  }
  const tables: TableRef[] = [];
  for (const entry of parser.tableList(sql, opt)) {
    const [, db, table] = entry.split('::');
    if (!table) continue;
    const schema = db === 'null' || db === undefined ? null : db;
    if (schema === null && ctes.has(table)) continue;
    tables.push({ catalog: null, schema, table });
  }
  const columns = new Set<string>();
  let star = false;
  for (const entry of parser.columnList(sql, opt)) {
    const name = entry.split('::').slice(2).join('::');
    if (name === '(.*)' || name === '*') star = true;
    else if (name) columns.add(name.toLowerCase());
  }
  if (dialect === 'sqlite') {
    for (const node of objects(ast))
      if (node.type === 'double_quote_string' && typeof node.value === 'string') columns.add(node.value.toLowerCase());
  }
  return { tables: unique(tables), columns: [...columns], star };
}

function unique(refs: TableRef[]): TableRef[] {
  const seen = new Map<string, TableRef>();
  for (const r of refs) seen.set(`${r.catalog ?? ''}\u0000${r.schema ?? ''}\u0000${r.table}`, r);
  return [...seen.values()];
}

/** The parser for a database's `backend` as Superset lists it (`postgresql`, `mysql`, `sqlite`, …); null when none here reads it. */
export function dialectOfBackend(backend: string | null | undefined): SqlDialect | null {
  const b = String(backend ?? '').toLowerCase();
  if (b === 'postgresql' || b === 'postgres') return 'postgresql';
  if (b === 'mysql' || b === 'mariadb' || b === 'sqlite') return b;
  return null;
}
