// The one decider for SQL sent to SQL Lab (lib/sql/read-only.ts), with strings built to confuse a
// tokeniser: quotes and comments inside each other, `--` inside literals, dollar quoting, nested
// comments, semicolons inside literals and names, E'' strings, backslashes, data-modifying CTEs,
// SELECT INTO, row locks, writing functions, Jinja, and a dialect without a parser. The old
// hand-written check (checkDictionaryQuery) passed several of the refused ones; CONFUSING_SQL is
// also an example list of the API fuzz test.
import { describe, expect, it } from 'vitest';
import { checkReadOnlyQuery, dialectOf, queryShape } from '../../lib/sql/read-only.ts';
import { CONFUSING_SQL } from '../support/confusing-sql.ts';

const refusal = async (sql: string, backend: string) => {
  const v = await checkReadOnlyQuery(sql, backend);
  return v.ok ? undefined : v.reason;
};
const sent = async (sql: string, backend: string) => {
  const v = await checkReadOnlyQuery(sql, backend);
  if (!v.ok) throw new Error(`refused: ${v.reason}`);
  return v.sql;
};

describe('read-only queries: the attack that deleted rows', () => {
  it.each(['postgresql', 'sqlite', 'mysql', 'mariadb'])('%s: a -- inside a literal hides no second statement', async (backend) => {
    expect(await refusal("SELECT 'a--' AS column_name; DELETE FROM sales", backend)).toMatch(/single statement/);
  });
});

describe('PostgreSQL (libpg-query)', () => {
  const pg = (sql: string) => refusal(sql, 'postgresql');

  it('reads literals, quoting and comments as PostgreSQL does, and sends its own rendering without them', async () => {
    // Each text is one SELECT; what is sent holds no comment and no second statement.
    const cases: Array<[string, RegExp]> = [
      ['SELECT $$;DELETE FROM sales;$$ AS column_name', /^SELECT ';DELETE FROM sales;' AS column_name$/],
      ["SELECT $tag$ ' ; DELETE FROM sales; -- $tag$ AS column_name", /^SELECT ' '' ; DELETE FROM sales; -- ' AS column_name$/],
      ['SELECT 1 AS column_name /* outer /* inner */ ; DELETE FROM sales; */', /^SELECT 1 AS column_name$/],
      ["SELECT E'\\'; DELETE FROM sales; --' AS column_name", /^SELECT '''; DELETE FROM sales; --' AS column_name$/],
      [
        'SELECT 1 AS "semi;colon--" FROM "odd;table" WHERE "a--b" = \';\'',
        /^SELECT 1 AS "semi;colon--" FROM "odd;table" WHERE "a--b" = ';'$/,
      ],
      ["SELECT 'it''s; -- not a comment' AS d -- a comment; DELETE FROM sales", /^SELECT 'it''s; -- not a comment' AS d$/],
      ['SELECT 1;', /^SELECT 1$/],
    ];
    for (const [sql, expected] of cases) expect(await sent(sql, 'postgresql'), sql).toMatch(expected);
  });

  it('sends a backslash in a literal as an E string, read the same whatever standard_conforming_strings says', async () => {
    expect(await sent("SELECT 'C:\\dir' AS p", 'postgresql')).toBe("SELECT E'C:\\\\dir' AS p");
  });

  it('refuses more than one statement, anything but SELECT, and what it cannot read', async () => {
    expect(await pg('SELECT 1; SELECT 2')).toMatch(/single statement; PostgreSQL reads 2/);
    expect(await pg("SELECT 'x'';'; DELETE FROM sales")).toMatch(/single statement/);
    expect(await pg('DELETE FROM sales')).toMatch(/must be a SELECT.*Delete/);
    expect(await pg("COPY sales TO '/tmp/x'")).toMatch(/must be a SELECT/);
    expect(await pg('DO $$ BEGIN DELETE FROM sales; END $$')).toMatch(/must be a SELECT/);
    expect(await pg('EXPLAIN ANALYZE DELETE FROM sales')).toMatch(/must be a SELECT/);
    expect(await pg('-- nothing but a comment')).toMatch(/empty/);
    expect(await pg('SELECT 1 /* never closed')).toMatch(/not valid PostgreSQL/);
    expect(await pg("SELECT 'never closed")).toMatch(/not valid PostgreSQL/);
  });

  it('refuses data-modifying CTEs, SELECT INTO and row locks, wherever they sit', async () => {
    expect(await pg('WITH gone AS (DELETE FROM sales RETURNING *) SELECT * FROM gone')).toMatch(/DELETE/);
    expect(await pg('WITH x AS (SELECT 1), y AS (UPDATE sales SET units = 0 RETURNING 1) SELECT * FROM x')).toMatch(/UPDATE/);
    expect(await pg('WITH x AS (INSERT INTO sales DEFAULT VALUES RETURNING 1) SELECT 1')).toMatch(/INSERT/);
    expect(await pg('SELECT * INTO copy_of_sales FROM sales')).toMatch(/SELECT INTO/);
    expect(await pg('SELECT * FROM sales FOR UPDATE')).toMatch(/FOR UPDATE/);
    expect(await pg('SELECT * FROM (SELECT * FROM sales FOR SHARE) s')).toMatch(/FOR UPDATE/);
  });

  it('calls only the built-in functions PostgreSQL marks unable to write', async () => {
    for (const sql of [
      "SELECT nextval('s')",
      "SELECT setval('s', 1)",
      "SELECT set_config('search_path', 'x', false)",
      'SELECT pg_terminate_backend(1)',
      'SELECT pg_cancel_backend(1)',
      "SELECT lo_import('/etc/passwd')",
      "SELECT dblink_exec('dbname=x', 'DELETE FROM sales')",
      'SELECT pg_advisory_lock(1)',
      "SELECT pg_notify('c', 'x')",
      "SELECT query_to_xml('DELETE FROM sales', true, true, '')",
      'SELECT pg_sleep(10)',
      "SELECT * FROM unnest('{1,2}'::int[]) WHERE public.wipe() IS NULL",
      "SELECT pg_read_file('/etc/passwd')",
    ]) {
      expect(await pg(sql), sql).toMatch(/built-in functions that cannot write/);
    }
    const ok = [
      'SELECT a.attname AS column_name, NULL AS verbose_name, col_description(a.attrelid, a.attnum) AS description FROM pg_catalog.pg_attribute a WHERE a.attrelid = to_regclass(\'"public"."t"\') AND a.attnum > 0',
      "SELECT lower(x), pg_catalog.upper(y), date_trunc('day', now()), count(*), string_agg(z, ','), random() FROM t GROUP BY 1, 2, 3",
      "SELECT extract(year FROM ts), trim(' x '), substring('abc' FROM 2), position('a' IN 'b'), coalesce(a, b), greatest(1, 2) FROM t",
    ];
    for (const sql of ok) expect(await pg(sql), sql).toBeUndefined();
  });
});

describe('review F8 and F9: calls written as field selection, and work without a bound', () => {
  const pg = (sql: string) => refusal(sql, 'postgresql');

  it('PostgreSQL: (t).f is refused (a call to f(t) where t has no field f); t.col and array subscripts still pass', async () => {
    for (const sql of [
      'SELECT (t).touch FROM t',
      'SELECT (t).touch AS column_name, 1 AS description FROM t',
      'SELECT ((t)).x FROM t',
      'SELECT (row(1, 2)).f1',
    ])
      expect(await pg(sql), sql).toMatch(/may not select a field of a row value/);
    for (const sql of ['SELECT t.col FROM t', 'SELECT s.t.col FROM s.t', 'SELECT (arr)[1] FROM t', 'SELECT t.* FROM t'])
      expect(await pg(sql), sql).toBeUndefined();
  });

  it.each(['postgresql', 'mysql', 'mariadb', 'sqlite'])('%s: refuses WITH RECURSIVE', async (backend) => {
    expect(await refusal('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t) SELECT count(*) FROM t', backend)).toMatch(
      /may not use WITH RECURSIVE/,
    );
    expect(await refusal('WITH t(n) AS (SELECT 1) SELECT n FROM t', backend)).toBeUndefined();
  });

  it('refuses the built-ins whose work or result has no bound, in each dialect', async () => {
    const cases: Array<[string, string]> = [
      ['postgresql', 'SELECT count(*) FROM generate_series(1, 1000000000000)'],
      ['postgresql', 'SELECT count(*) FROM pg_catalog.generate_series(1, 10)'],
      ['postgresql', "SELECT repeat('x', 1000000000)"],
      ['postgresql', "SELECT lpad('x', 1000000000)"],
      ['postgresql', 'SELECT array_fill(1, ARRAY[1000000000])'],
      ['postgresql', "SELECT format('%1000000000s', 'x')"],
      ['mysql', "SELECT repeat('x', 1000000000)"],
      ['mariadb', 'SELECT space(1000000000)'],
      ['mysql', "SELECT rpad('x', 1000000000, 'y')"],
      ['sqlite', 'SELECT zeroblob(1000000000)'],
      ['sqlite', 'SELECT randomblob(1000000000)'],
      ['sqlite', "SELECT replace(hex(zeroblob(500000000)), '0', 'aa')"],
      ['sqlite', "SELECT printf('%.*c', 1000000000, 'x')"],
    ];
    for (const [backend, sql] of cases) expect(await refusal(sql, backend), `${backend}: ${sql}`).toMatch(/grows without bound/);
    expect(await refusal("SELECT upper('x'), length('abc')", 'sqlite')).toBeUndefined();
    expect(await refusal("SELECT concat('a', 'b'), char_length('x')", 'mysql')).toBeUndefined();
  });
});

describe('SQLite, MySQL, MariaDB (node-sql-parser)', () => {
  it('sends the rendering: comments, MySQL executable comments and # comments are not in it', async () => {
    expect(await sent('SELECT 1 AS a /*! ; DELETE FROM sales */', 'mysql')).toBe('SELECT 1 AS `a`');
    expect(await sent("SELECT 'a--' AS column_name -- ; DELETE FROM sales", 'sqlite')).toBe(`SELECT 'a--' AS "column_name"`);
    expect(await sent('SELECT 1 AS a # ; DELETE FROM sales', 'sqlite')).toBe('SELECT 1 AS "a"');
    expect(await sent(`SELECT "semi;colon" FROM "odd;table" WHERE a = 'b;c'`, 'sqlite')).toBe(
      `SELECT "semi;colon" FROM "odd;table" WHERE "a" = 'b;c'`,
    );
  });

  it('refuses a backslash in a literal: SQLite reads it as a character, MySQL as an escape', async () => {
    expect(await refusal("SELECT 'x\\'; DELETE FROM sales; -- ' AS column_name", 'sqlite')).toMatch(/backslash|single statement|not valid/);
    expect(await refusal("SELECT 'x\\'; DELETE FROM sales; -- ' AS column_name", 'mysql')).toMatch(/backslash/);
  });

  it('refuses anything but one SELECT', async () => {
    expect(await refusal('SELECT 1; SELECT 2', 'sqlite')).toMatch(/single statement; SQLite reads 2/);
    expect(await refusal("SELECT ';' AS a; DROP TABLE sales", 'mysql')).toMatch(/single statement/);
    expect(await refusal("ATTACH DATABASE '/tmp/x.db' AS x", 'sqlite')).toMatch(/must be a SELECT/);
    expect(await refusal('DELETE FROM sales', 'sqlite')).toMatch(/must be a SELECT/);
    expect(await refusal('WITH gone AS (DELETE FROM sales RETURNING *) SELECT * FROM gone', 'sqlite')).toMatch(/not valid/);
    expect(await refusal('PRAGMA writable_schema = 1', 'sqlite')).toMatch(/not valid|must be a SELECT/);
    expect(await refusal('-- only a comment', 'sqlite')).toMatch(/empty|not valid/);
  });

  it('refuses SELECT INTO, row locks, assignments and writing or unknown functions', async () => {
    expect(await refusal("SELECT a FROM t INTO OUTFILE '/tmp/x'", 'mysql')).toMatch(/INTO/);
    expect(await refusal('SELECT a INTO @v FROM t', 'mysql')).toMatch(/INTO/);
    expect(await refusal('SELECT a FROM t FOR UPDATE', 'mysql')).toMatch(/lock rows/);
    expect(await refusal('SELECT a FROM t LOCK IN SHARE MODE', 'mysql')).toMatch(/lock rows/);
    expect(await refusal('SELECT a FROM t FOR UPDATE', 'mariadb')).toMatch(/lock rows/);
    expect(await refusal('SELECT @a := 1', 'mysql')).toMatch(/assigns/);
    for (const fn of [
      'SLEEP(5)',
      "GET_LOCK('x', 1)",
      'BENCHMARK(1000000, MD5(1))',
      "LOAD_FILE('/etc/passwd')",
      'LAST_INSERT_ID(5)',
      'mydb.wipe()',
      'wipe()',
    ]) {
      expect(await refusal(`SELECT ${fn}`, 'mysql'), fn).toMatch(/functions that only compute a value/);
    }
    expect(await refusal("SELECT load_extension('/tmp/evil.so')", 'sqlite')).toMatch(/functions that only compute a value/);
    expect(
      await refusal('SELECT lower(column_name) AS column_name, upper(verbose_name), count(*) FROM dict GROUP BY 1, 2', 'sqlite'),
    ).toBeUndefined();
  });
});

describe('every dialect', () => {
  it('refuses Jinja markers: Superset renders them in SQL Lab after the check', async () => {
    for (const backend of ['postgresql', 'sqlite', 'mysql']) {
      expect(await refusal(`SELECT '{{ "x\\x27; DELETE FROM sales; --" }}' AS column_name`, backend), backend).toBeDefined();
      expect(await refusal("SELECT '{% raw %}x{% endraw %}' AS column_name", backend), backend).toMatch(/Jinja/);
      expect(await refusal("SELECT '{# c #}' AS column_name", backend), backend).toMatch(/Jinja/);
    }
  });

  it('refuses a database engine without a parser here, and knows the ones it has', async () => {
    for (const backend of ['mssql', 'trino', 'bigquery', 'oracle', '', null]) {
      expect(await refusal('SELECT 1', backend as string), String(backend)).toMatch(/no SQL parser in Switchyard/);
    }
    expect(['postgresql', 'mysql', 'mariadb', 'sqlite'].map(dialectOf)).toEqual(['postgresql', 'mysql', 'mariadb', 'sqlite']);
  });

  it('every confusing example the fuzz test sends is refused for every dialect', async () => {
    for (const sql of CONFUSING_SQL) {
      for (const backend of ['postgresql', 'sqlite', 'mysql']) expect(await refusal(sql, backend), `${backend}: ${sql}`).toBeDefined();
    }
  });

  it("tells a template's values that only change constants from values that change the query", async () => {
    for (const dialect of ['postgresql', 'sqlite'] as const) {
      const base = await queryShape("SELECT * FROM t WHERE region = 'EMEA' AND units > 5", dialect);
      expect(await queryShape("SELECT * FROM t WHERE region = 'sy_value_0' AND units > 1", dialect)).toBe(base);
      expect(await queryShape("SELECT * FROM t WHERE region = 'EMEA' OR 1 = 1 AND units > 5", dialect)).not.toBe(base);
      expect(await queryShape("SELECT * FROM t WHERE region = '' UNION SELECT * FROM secrets --' AND units > 5", dialect)).not.toBe(base);
    }
  });
});
