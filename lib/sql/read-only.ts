/**
 * The one decider for "is this a read-only query Switchyard may send to SQL Lab for this
 * database": anything that reaches Superset's SQL Lab as the service account (a caller's
 * dictionary query, a preview's compiled SQL and its row count) passes here first.
 *
 * A query passes when the real parser of the database's dialect reads exactly one SELECT
 * (WITH … SELECT when no CTE writes) with no SELECT INTO, no row locks and only built-in
 * functions that cannot write; then the parser's own rendering of that statement is what is
 * sent, so nothing the parser skipped reaches another reader. Superset renders Jinja in
 * everything SQL Lab runs (ENABLE_TEMPLATE_PROCESSING), which would turn `{{ … }}` inside a
 * literal into SQL after this check, so Jinja's markers are refused too. A dialect without a
 * parser here, or text the parser does not understand, is refused.
 */
import { checkNodeSql, nodeSqlShape, type NodeSqlDialect } from './node-sql.ts';
import { checkPostgres, postgresShape } from './postgres.ts';
import type { Checked } from './verdict.ts';

export type SqlDialect = 'postgresql' | NodeSqlDialect;

/** Superset's database `backend` (the SQLAlchemy dialect name) → the parser that reads it. */
const DIALECTS: Record<string, SqlDialect> = {
  postgresql: 'postgresql',
  postgres: 'postgresql',
  mysql: 'mysql',
  mariadb: 'mariadb',
  sqlite: 'sqlite',
};

/** The backends a caller's SQL may be sent to, for messages and documentation. */
export const SUPPORTED_BACKENDS = Object.keys(DIALECTS);

const MAX_SQL_CHARS = 100_000;
/** Jinja's markers, as Superset's template processor reads them. */
const JINJA = /\{\{|\{%|\{#/;

export type ReadOnlyVerdict = { ok: true; sql: string; dialect: SqlDialect } | { ok: false; reason: string };

export function dialectOf(backend: string | null | undefined): SqlDialect | undefined {
  return DIALECTS[(backend ?? '').trim().toLowerCase()];
}

/**
 * `reason` completes a sentence about the query ("… must be a single statement; PostgreSQL
 * reads 2"); `sql` is the text to send, the parser's rendering of the query it checked.
 */
export async function checkReadOnlyQuery(sql: string, backend: string | null | undefined): Promise<ReadOnlyVerdict> {
  const dialect = dialectOf(backend);
  if (!dialect) {
    return {
      ok: false,
      reason: `cannot be checked: the database's engine (${backend || 'unknown'}) has no SQL parser in Switchyard, so no query is sent to it (supported: ${SUPPORTED_BACKENDS.join(', ')})`,
    };
  }
  if (sql.length > MAX_SQL_CHARS) return { ok: false, reason: `is longer than ${MAX_SQL_CHARS} characters` };
  const checked: Checked = dialect === 'postgresql' ? await checkPostgres(sql) : checkNodeSql(dialect, sql);
  if (!checked.ok) return checked;
  if (JINJA.test(checked.sql))
    return { ok: false, reason: 'may not contain Jinja markers ({{, {% or {#): Superset would render them into SQL after this check' };
  return { ok: true, sql: checked.sql, dialect };
}

/**
 * The query's shape: its parse tree with every constant's value left out. Two compilations of
 * one template whose shapes match differ only in constants, so the values that differ between
 * them were bound or quoted, never pasted into the SQL.
 */
export async function queryShape(sql: string, dialect: SqlDialect): Promise<string> {
  return dialect === 'postgresql' ? postgresShape(sql) : nodeSqlShape(dialect, sql);
}
