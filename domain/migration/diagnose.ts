import type { NextAction } from '../../contracts/outcomes.ts';
import type { PreparedBundle } from './plan.ts';
import type { TargetIndex } from './target-index.ts';

/**
 * Superset answers an import it cannot do at run time with a bare 500 ("Import dashboard failed
 * for an unknown reason"). This looks in the target for the causes known to do that and says
 * what they are in words a person can act on; undefined when none applies.
 *
 * Known cause: a Superset whose metadata database is SQLite keeps a legacy UNIQUE (table_name) on
 * its datasets, so a dataset cannot be created on a table name another database's dataset
 * already uses (the IntegrityError behind the 500). PostgreSQL metadata has no such constraint.
 */
export async function diagnoseImportFailure(
  index: TargetIndex,
  prepared: PreparedBundle,
  ctx: { sourceEnvId: string; targetEnvId: string; dashboardId: number },
): Promise<{ error: string; next_actions: NextAction[] } | undefined> {
  const collisions: Array<{ table: string; dataset: number; database: { id: number; name: string }; sourceDatabaseId?: number }> = [];
  await index.refresh();
  for (const f of prepared.bundle.of('datasets')) {
    const table = typeof f.content.table_name === 'string' ? f.content.table_name : '';
    const uuid = typeof f.content.uuid === 'string' ? f.content.uuid : '';
    if (!table || index.dataset(uuid)) continue;
    const targetDbId = findTargetDatabaseId(prepared, f.content.database_uuid);
    for (const other of index.datasetsNamed(table)) {
      if (!other.database || other.uuid === uuid || other.database.id === targetDbId) continue;
      collisions.push({
        table,
        dataset: other.id,
        database: other.database,
        sourceDatabaseId: targetDbId !== undefined ? prepared.sourceDatabaseIds.get(targetDbId) : undefined,
      });
    }
  }
  if (!collisions.length) return undefined;

  const what = collisions
    .map((c) => `dataset \`${c.table}\` (id ${c.dataset}) already exists on database \`${c.database.name}\` (id ${c.database.id})`)
    .join('; ');
  const actions: NextAction[] = collisions.map((c) => ({
    action: 'resolve_table_name_collision',
    description: `Delete or rename dataset ${c.dataset} (\`${c.table}\` on \`${c.database.name}\`) in the target if nothing needs it, then retry this dashboard`,
  }));
  const remap = collisions.find((c) => c.sourceDatabaseId !== undefined);
  if (remap) {
    actions.push({
      action: 'retry_with_mapping',
      description: `Or, if database \`${remap.database.name}\` holds the same data, map the source database onto it so the dashboard reuses dataset ${remap.dataset}`,
      request: {
        method: 'POST',
        path: '/api/dashboards/migrate',
        body: {
          source_env_id: ctx.sourceEnvId,
          target_env_id: ctx.targetEnvId,
          dashboard_ids: [ctx.dashboardId],
          db_mappings: [{ source_database_id: remap.sourceDatabaseId, target_database_id: remap.database.id }],
        },
      },
    });
  }
  return { error: `this Superset keeps one dataset per table name; ${what}`, next_actions: actions };
}

/** The target database a bundled dataset points at after remapping (its file carries the target database's uuid). */
function findTargetDatabaseId(prepared: PreparedBundle, databaseUuid: unknown): number | undefined {
  const db = prepared.objects.find((o) => o.kind === 'database' && o.uuid === databaseUuid);
  return db?.target_id ?? undefined;
}
