/**
 * The default dictionary query: the column comments a database keeps in its own catalog for a
 * dataset's table, as rows of `column_name`, `verbose_name`, `description`. Only engines that
 * keep column comments have one; for the rest (SQLite, for one) the caller sends its own query.
 */

/** SQL string literal: single quotes doubled. */
function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** Quoted identifier (PostgreSQL family): double quotes doubled. */
function pgIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

const POSTGRES_LIKE = new Set(['postgresql', 'postgres', 'redshift', 'cockroachdb', 'greenplum']);
const MYSQL_LIKE = new Set(['mysql', 'mariadb', 'starrocks', 'doris']);

/** Backends that have a default query here. */
export function hasCatalogComments(backend: string | null | undefined): boolean {
  const b = (backend ?? '').toLowerCase();
  return POSTGRES_LIKE.has(b) || MYSQL_LIKE.has(b);
}

/**
 * The query for a physical table, or undefined when the backend keeps no column comments that
 * this knows how to read. Names are embedded as literals (they come from the dataset, not from
 * the caller), quoted so any name is read as that name.
 */
export function catalogCommentsQuery(
  backend: string | null | undefined,
  table: { schema?: string | null; table_name: string },
): string | undefined {
  const b = (backend ?? '').toLowerCase();
  if (POSTGRES_LIKE.has(b)) {
    const qualified = table.schema ? `${pgIdent(table.schema)}.${pgIdent(table.table_name)}` : pgIdent(table.table_name);
    return [
      'SELECT a.attname AS column_name, NULL AS verbose_name, col_description(a.attrelid, a.attnum) AS description',
      'FROM pg_catalog.pg_attribute a',
      `WHERE a.attrelid = to_regclass(${literal(qualified)}) AND a.attnum > 0 AND NOT a.attisdropped`,
      'ORDER BY a.attnum',
    ].join('\n');
  }
  if (MYSQL_LIKE.has(b)) {
    const schema = table.schema ? literal(table.schema) : 'DATABASE()';
    return [
      "SELECT column_name AS column_name, NULL AS verbose_name, NULLIF(column_comment, '') AS description",
      'FROM information_schema.columns',
      `WHERE table_schema = ${schema} AND table_name = ${literal(table.table_name)}`,
      'ORDER BY ordinal_position',
    ].join('\n');
  }
  return undefined;
}
