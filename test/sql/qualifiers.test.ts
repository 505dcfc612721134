// A schema or catalog rule's name as SQL: the one identifier decider (lib/sql/identifier.ts), the
// qualifier rewrite that refuses a name or a rendering it cannot trust (lib/sql/qualifiers.ts),
// and the bundle's rules refusing to take effect (lib/bundles/env-rules.ts). The payloads are the
// security review's (F1, F10): raw SQL in a rule's `to` rendered unescaped by node-sql-parser.
// No Superset needed.
import { describe, expect, it } from 'vitest';
import { Bundle, type BundleFile } from '../../lib/bundles/bundle.ts';
import {
  applyEnvRules,
  EnvRuleRefusedError,
  MAX_RULE_BUNDLE_GROWTH_CHARS,
  MAX_RULE_FIELD_CHARS,
  ruleProblems,
} from '../../lib/bundles/env-rules.ts';
import { identifierProblem } from '../../lib/sql/identifier.ts';
import { renameQualifier, sameButQualifier } from '../../lib/sql/qualifiers.ts';
import { HOSTILE_RULE_NAMES } from '../support/hostile-rule-names.ts';

const HOSTILE: Record<'mysql' | 'mariadb' | 'sqlite' | 'postgresql', string[]> = {
  mysql: [
    'x`; DELETE FROM t; -- ',
    'analytics`.`orders` WHERE SLEEP(3)=0 -- ',
    'analytics`.`orders`; DROP TABLE analytics.scratch; SELECT 1 FROM `analytics',
  ],
  mariadb: ['x`) UNION SELECT password FROM mysql.user -- ', 'x` UNION SELECT password FROM mysql.user -- '],
  sqlite: ['x"; DELETE FROM t; -- ', 'x" UNION SELECT sql FROM sqlite_master -- '],
  postgresql: ['x"; DELETE FROM t; --', 'x" UNION SELECT passwd FROM pg_shadow --'],
};

describe('identifierProblem: the one decider for a schema or catalog name', () => {
  it('takes letters (any script), digits, _, $ and -', () => {
    for (const name of ['analytics', 'analytics_dev', 'Analytics$2', 'sales-eu', 'аналитика', 'データ'])
      expect(identifierProblem(name)).toBeUndefined();
  });

  it('names the first character that is not one, and where it is', () => {
    expect(identifierProblem('x`; DELETE')).toMatch(/'`' \(U\+0060\) at position 2/);
    expect(identifierProblem('a"b')).toMatch(/'"' \(U\+0022\) at position 2/);
    expect(identifierProblem('a b')).toMatch(/U\+0020 at position 2/);
    for (const c of [';', '.', '\\', "'", '[', ']', '(', ',', '\t', '\n', '\u0000', '/', '*', '#'])
      expect(identifierProblem(`a${c}`)).toMatch(/position 2/);
    expect(identifierProblem('')).toMatch(/empty/);
    expect(identifierProblem('a'.repeat(64))).toMatch(/at most 63/);
  });
});

describe('renameQualifier refuses a name that would leave its quotes', () => {
  for (const [dialect, payloads] of Object.entries(HOSTILE) as Array<[keyof typeof HOSTILE, string[]]>) {
    it.each(payloads)(`${dialect}: %s`, (to) => {
      const r = renameQualifier(dialect, 'SELECT * FROM dev.orders', 'schema', 'dev', to);
      expect(r).toMatchObject({ ok: false, refused: true, reason: expect.stringMatching(/new schema name may hold only letters/) });
    });
  }

  it('renders an ordinary name with the dialect quoting, and counts it', () => {
    expect(renameQualifier('mysql', 'select * from dev.orders', 'schema', 'dev', 'prod-eu')).toEqual({
      ok: true,
      sql: 'SELECT * FROM `prod-eu`.`orders`',
      count: 1,
    });
    expect(renameQualifier('sqlite', 'select * from dev.orders union all select * from dev.b', 'schema', 'dev', 'prod$1')).toEqual({
      ok: true,
      sql: 'SELECT * FROM "prod$1"."orders" UNION ALL SELECT * FROM "prod$1"."b"',
      count: 2,
    });
    const pg = renameQualifier('postgresql', 'select * from dev.orders', 'schema', 'dev', 'Prod');
    expect(pg.ok && pg.sql).toMatch(/FROM "Prod"\.orders/);
  });

  it('a query that already names the new schema still reads back the same', () => {
    const r = renameQualifier('mysql', 'select * from dev.a join prod.b on 1 = 1', 'schema', 'dev', 'prod');
    expect(r).toMatchObject({ ok: true, count: 1 });
  });
});

describe('sameButQualifier: the rewrite read back, for a renderer that lets a name out', () => {
  // What node-sql-parser's renderer produced for the review's payloads before any name was checked.
  const rendered: Array<['mysql' | 'mariadb' | 'sqlite', string, string]> = [
    ['mysql', 'x`; DELETE FROM t; -- ', 'SELECT * FROM `x`; DELETE FROM t; -- `.`orders`'],
    ['mariadb', 'x`) UNION SELECT password FROM mysql.user -- ', 'SELECT * FROM `x`) UNION SELECT password FROM mysql.user -- `.`orders`'],
    ['mariadb', 'x` UNION SELECT password FROM mysql.user -- ', 'SELECT * FROM `x` UNION SELECT password FROM mysql.user -- `.`orders`'],
    ['sqlite', 'x"; DELETE FROM t; -- ', 'SELECT * FROM "x"; DELETE FROM t; -- "."orders"'],
  ];
  it.each(rendered)('%s: %s is not the same query', (dialect, to, sql) => {
    expect(sameButQualifier(dialect, 'SELECT * FROM dev.orders', sql, 'dev', to)).toBe(false);
  });

  it('the honest rewrite is', () => {
    expect(
      sameButQualifier(
        'mysql',
        'select o.id from dev.orders o where o.id in (select id from dev.r)',
        'SELECT `o`.`id` FROM `prod`.`orders` AS `o` WHERE `o`.`id` IN (SELECT `id` FROM `prod`.`r`)',
        'dev',
        'prod',
      ),
    ).toBe(true);
    expect(sameButQualifier('mysql', 'select * from dev.orders', 'SELECT * FROM `prod`.`orders` WHERE 1 = 1', 'dev', 'prod')).toBe(false);
  });
});

function bundleOf(files: Array<{ path: string; content: Record<string, unknown> }>): Bundle {
  const map = new Map<string, BundleFile>();
  for (const f of files) map.set(f.path, { kind: f.path.split('/')[0] as BundleFile['kind'], path: f.path, content: f.content });
  map.set('metadata.yaml', { path: 'metadata.yaml', kind: 'metadata', content: { version: '1.0.0', type: 'Dashboard' } });
  return new Bundle('bundle', map);
}

describe('applyEnvRules refuses a rule that slipped past the API', () => {
  const bundle = (uri: string) =>
    bundleOf([
      { path: 'databases/db.yaml', content: { uuid: 'db-1', database_name: 'db', sqlalchemy_uri: uri } },
      {
        path: 'datasets/db/v.yaml',
        content: { uuid: 'ds-1', database_uuid: 'db-1', table_name: 'v', schema: 'dev', sql: 'SELECT * FROM dev.orders' },
      },
    ]);

  it.each([
    ['mysql://u@h/db', 'x`; DELETE FROM t; -- '],
    ['mariadb://u@h/db', 'x`) UNION SELECT password FROM mysql.user -- '],
    ['sqlite:////tmp/x.db', 'x"; DELETE FROM t; -- '],
    ['postgresql://u@h/db', 'x"; DELETE FROM t; --'],
  ])('%s: fails with the rule, the offending character and a next action', (uri, to) => {
    const b = bundle(uri);
    let thrown: unknown;
    try {
      applyEnvRules(b, [{ id: 'r-1', kind: 'schema', from: 'dev', to }]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(EnvRuleRefusedError);
    const e = thrown as EnvRuleRefusedError;
    expect(e.message).toMatch(/schema rule r-1 .*at position 2 .*nothing was written/);
    expect(e.extra?.next_actions).toEqual([expect.objectContaining({ action: 'fix_env_rule' })]);
    // Refused before anything changed.
    expect(b.files.get('datasets/db/v.yaml')!.content).toMatchObject({ schema: 'dev', sql: 'SELECT * FROM dev.orders' });
  });

  it('ruleProblems, the API check, is the same decider', () => {
    expect(ruleProblems({ kind: 'schema', from: 'dev', to: 'x`; DELETE FROM t; -- ' })).toEqual([
      {
        field: 'to',
        message: expect.stringMatching(/^a schema name may hold only letters, digits, _, \$ and -; '`' \(U\+0060\) at position 2/),
      },
    ]);
    expect(ruleProblems({ kind: 'catalog', from: 'a.b', to: 'c' })).toEqual([
      { field: 'from', message: expect.stringMatching(/'\.' \(U\+002E\) at position 2/) },
    ]);
    expect(ruleProblems({ kind: 'schema', from: 'analytics_dev', to: 'analytics' })).toEqual([]);
  });

  it.each(HOSTILE_RULE_NAMES)("the fuzz test's example %s is refused for schema and catalog", (to) => {
    for (const kind of ['schema', 'catalog'] as const)
      expect(ruleProblems({ kind, from: 'dev', to })).toEqual([
        { field: 'to', message: expect.stringMatching(/ at position \d+ is not one$/) },
      ]);
  });
});

describe('applyEnvRules bounds what a text rule may grow (F10)', () => {
  const markdown = (code: string, n = 1) =>
    bundleOf(
      Array.from({ length: n }, (_, i) => ({
        path: `dashboards/D_${i}.yaml`,
        content: { uuid: `d-${i}`, dashboard_title: 'D', position: { 'MARKDOWN-a': { type: 'MARKDOWN', meta: { code } } }, metadata: {} },
      })),
    );

  it('a field past the bound fails the item before the field is built', () => {
    const b = markdown('a'.repeat(100_000));
    expect(() => applyEnvRules(b, [{ id: 'r-t', kind: 'text', from: 'a', to: 'b'.repeat(2000) }])).toThrow(
      new RegExp(`text rule r-t .*at least 200000000 characters long, more than the ${MAX_RULE_FIELD_CHARS}`),
    );
    expect(
      (b.files.get('dashboards/D_0.yaml')!.content.position as Record<string, { meta: { code: string } }>)['MARKDOWN-a']!.meta.code,
    ).toHaveLength(100_000);
  });

  it('many fields each under the bound fail once the bundle has grown past its own', () => {
    const perField = 'a'.repeat(900);
    const n = Math.ceil(MAX_RULE_BUNDLE_GROWTH_CHARS / (900 * 999)) + 1;
    expect(() => applyEnvRules(markdown(perField, n), [{ id: 'r-g', kind: 'text', from: 'a', to: 'b'.repeat(1000) }])).toThrow(
      /text rule r-g .*grow the bundle by more than/,
    );
  });

  it('an ordinary text rule is not bounded by it', () => {
    const b = markdown('see https://dev.example.com/x '.repeat(1000));
    const [effect] = applyEnvRules(b, [{ id: 'r-u', kind: 'text', from: 'https://dev.example.com', to: 'https://prod.example.com' }]);
    expect(effect!.matched).toBe(1000);
  });
});
