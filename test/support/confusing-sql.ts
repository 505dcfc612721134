/**
 * SQL built to confuse a tokeniser, each hiding a write behind quoting, comments or templating.
 * Every one must be refused for every dialect (test/sql/read-only.test.ts checks it), and the API
 * fuzz test sends them as `sql` (test/fuzz/schemathesis.test.ts): a 400, never a 202.
 */
export const CONFUSING_SQL: readonly string[] = [
  "SELECT 'a--' AS column_name; DELETE FROM sales",
  "SELECT 'a;' AS column_name;DELETE FROM sales;--'",
  "SELECT 1 AS column_name; /* ' */ DELETE FROM sales",
  "SELECT '/*' AS column_name; DELETE FROM sales; -- */",
  'SELECT "x;--" AS column_name; DELETE FROM sales',
  "SELECT 'it''s' AS column_name; UPDATE sales SET units = 0",
  'SELECT \'{{ "x\\x27; DELETE FROM sales; --" }}\' AS column_name',
  "SELECT '{% set x = 1 %}' AS column_name",
  "WITH gone AS (DELETE FROM sales RETURNING *) SELECT 'x' AS column_name FROM gone",
  'SELECT * INTO sales_copy FROM sales',
  'SELECT column_name FROM dict FOR UPDATE',
  "DELETE FROM sales WHERE 'SELECT' = 'SELECT'",
  '/* SELECT */ DELETE FROM sales',
  '-- SELECT\nDROP TABLE sales',
  'SELECT 1 AS column_name;\n\nDROP TABLE sales',
];
