/**
 * Saved queries behind the dashboard's datasets. Superset keeps no link either: a saved query
 * belongs to a dataset when it is on the dataset's database and its SQL is the virtual dataset's
 * (whitespace and a final semicolon aside) or its label is the dataset's name. Superset shows each
 * account only its own saved queries, so these are the service account's. Matched by label on the
 * mapped target database, its SQL under the pair's schema and catalog rules (./sql-rules.ts).
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import type { SavedQuery } from '../../../lib/superset/resources/saved-queries.ts';
import { attempt, item, onObject, type CompanionKind, type KindResult } from './kind.ts';
import { underRules } from './sql-rules.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import { answer, type CapturedReads, type CompanionDocuments } from './kind-documents.ts';

const sqlKey = (s: string | null) => (s ?? '').replace(/;\s*$/, '').replace(/\s+/g, ' ').trim().toLowerCase();

/** `companions/saved_queries/<label>.yaml`: a query behind a dataset, its database by uuid. */
export interface QueryDoc {
  label: string;
  description: string | null;
  database: string | null;
  schema: string | null;
  catalog: string | null;
  sql: string | null;
}

const savedQueriesDocuments: CompanionDocuments<QueryDoc> = {
  write: ({ recording, datasets, names, databases }) =>
    queriesOf(recording, datasets, names).map((q) => [
      q.label,
      {
        label: q.label,
        description: q.description,
        database: q.db_id !== null ? (databases.get(q.db_id) ?? null) : null,
        schema: q.schema,
        catalog: q.catalog,
        sql: q.sql,
      },
    ]),
  replay(docs, x) {
    x.set(
      'savedQueries',
      'list',
      [],
      docs.map(({ database, ...q }, i) => ({ ...q, id: i + 1, db_id: x.dbId(database) })),
    );
  },
};

/** The queries the kind's items named, on one of the datasets' databases. */
function queriesOf(recording: CapturedReads['recording'], datasets: ObjectMeta[], labels: ReadonlySet<string>): SavedQuery[] {
  const dbs = new Set(datasets.map((d) => d.database_id));
  return (answer<SavedQuery[]>(recording, 'savedQueries', 'list') ?? []).filter((q) => labels.has(q.label) && dbs.has(q.db_id));
}

export const savedQueries: CompanionKind<'saved_queries'> = {
  kind: 'saved_queries',
  documents: savedQueriesDocuments,
  reads: ['savedQueries', 'databases'],
  lists: ['savedQueries.list'],
  async run(ctx, write): Promise<KindResult> {
    const src = await ctx.sourceView();
    const all = await ctx.source.savedQueries.list();
    const behind = all.flatMap((q) => {
      const ds = src.datasets.find(
        (d) => d.database_id === q.db_id && ((d.sql && sqlKey(d.sql) === sqlKey(q.sql)) || d.table_name === q.label),
      );
      return ds ? [{ q, ds }] : [];
    });
    if (!behind.length) return { items: [] };
    const theirs = await ctx.target.savedQueries.list();
    const items: CompanionItem[] = [];
    for (const { q, ds } of behind) {
      const on = { on: onObject('dataset', ds.name) };
      const db = q.db_id !== null ? ctx.mappings.get(q.db_id) : undefined;
      if (db === undefined) {
        items.push(item(q.label, 'missing', { ...on, note: `its database (${q.db_id}) has no mapping to a target database` }));
        continue;
      }
      const wanted: Omit<SavedQuery, 'id'> = await underRules(
        { label: q.label, description: q.description, db_id: db, schema: q.schema, catalog: q.catalog, sql: q.sql },
        ctx.target,
        db,
        ctx.envRules,
      );
      const there = theirs.find((x) => x.label === q.label && x.db_id === db);
      const fields = there ? (['sql', 'schema', 'description'] as const).filter((f) => (there[f] ?? '') !== (wanted[f] ?? '')) : [];
      const action = !there ? 'create' : fields.length ? 'update' : 'unchanged';
      const i = item(q.label, action, { ...on, target_id: there?.id ?? null, ...(fields.length ? { fields: [...fields] } : {}) });
      items.push(i);
      if (!write || action === 'unchanged') continue;
      await attempt([i], () => (there ? ctx.target.savedQueries.update(there.id, wanted) : ctx.target.savedQueries.create(wanted)));
    }
    return { items };
  },
};
