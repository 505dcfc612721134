/**
 * Schema and catalog rule values that carry SQL (security review F1): each would leave its quotes
 * in a renderer that does not escape them. The API refuses every one with a 400 naming the
 * character (test/environments/env-rules-api.test.ts), the rewrite refuses them too
 * (test/sql/qualifiers.test.ts), and the API fuzz test sends them as `to`.
 */
export const HOSTILE_RULE_NAMES: readonly string[] = [
  'x`; DELETE FROM t; -- ',
  'analytics`.`orders` WHERE SLEEP(3)=0 -- ',
  'x`) UNION SELECT password FROM mysql.user -- ',
  'x"; DELETE FROM t; -- ',
  'x" UNION SELECT sql FROM sqlite_master -- ',
  "x'; DROP TABLE t; --",
  'a.b',
  'two words',
  'x\\',
];
