/**
 * A saved query's or an alert's SQL as the target should run it: the pair's schema and catalog
 * rules applied as they are to a virtual dataset's SQL in the bundle (lib/bundles/env-rules.ts),
 * by the parser of the target database's dialect, and to the query's own schema and catalog
 * fields. Without it a query copied from dev would still read dev's schema in prod. SQL the parser
 * cannot read, or on a backend without a parser here, stays as written (as in the bundle).
 */
import type { EnvRule } from '../../../contracts/env-rules.ts';
import { EnvRuleRefusedError } from '../../../lib/bundles/env-rules.ts';
import { dialectOfUri, renameQualifier } from '../../../lib/sql/qualifiers.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';

interface Query {
  sql: string | null;
  schema?: string | null;
  catalog?: string | null;
}

/** The query with the rules applied; the same object when the pair has no schema or catalog rule. */
export async function underRules<T extends Query>(q: T, target: SupersetClient, databaseId: number, rules: readonly EnvRule[]): Promise<T> {
  const qualifiers = rules.filter((r): r is EnvRule & { kind: 'schema' | 'catalog' } => r.kind === 'schema' || r.kind === 'catalog');
  if (!qualifiers.length) return q;
  const out: T = { ...q };
  for (const r of qualifiers) if (out[r.kind] === r.from) out[r.kind] = r.to;
  if (!out.sql?.trim()) return out;
  const dialect = dialectOfUri(await target.databases.connectionUri(databaseId));
  if (!dialect) return out;
  for (const r of qualifiers) {
    const renamed = renameQualifier(dialect, out.sql!, r.kind, r.from, r.to);
    // A rule whose name or rewrite is unsafe fails the companion rather than travel unrenamed.
    if (!renamed.ok && renamed.refused) throw new EnvRuleRefusedError(r, `cannot rewrite this query's SQL: ${renamed.reason}`);
    if (renamed.ok && renamed.count) out.sql = renamed.sql;
  }
  return out;
}
