import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import { type MigrationUpstream, TargetIndex } from '../../domain/migration/index.ts';

export interface RestoreBlocker {
  kind: 'dashboard_slug' | 'database' | 'dataset';
  detail: string;
  next_action: NextAction;
}

/**
 * Superset's import matches objects it does not know by UUID on other unique keys and takes them
 * over: a database by name, a dataset by table, a dashboard by slug.
 * Restoring into the environment the backup came from is only safe while each object of the backup
 * either still exists with its own UUID or has no look-alike. A look-alike blocks the restore:
 * nothing is imported, and the blocker says what to rename or remove.
 */
export async function findRestoreBlockers(bundle: Bundle, upstream: MigrationUpstream): Promise<RestoreBlocker[]> {
  const index = await TargetIndex.build(upstream);
  const dbByUuid = new Map(index.databases.map((d) => [d.uuid, d]));
  return [
    ...(await dashboardSlugBlockers(bundle, upstream, index)),
    ...databaseBlockers(bundle, index, dbByUuid),
    ...datasetBlockers(bundle, index, dbByUuid),
  ];
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : null);

type IndexDatabase = TargetIndex['databases'][number];
type DatabasesByUuid = Map<IndexDatabase['uuid'], IndexDatabase>;

/** The backup's dashboard slug, when another dashboard now holds it. */
async function dashboardSlugBlockers(bundle: Bundle, upstream: MigrationUpstream, index: TargetIndex): Promise<RestoreBlocker[]> {
  const dashboard = bundle.of('dashboards')[0];
  const uuid = str(dashboard?.content.uuid);
  const slug = str(dashboard?.content.slug);
  if (!slug) return [];
  // Releases before 6.0 answer the detail without a uuid: the owner is told apart by id.
  const [owner, own] = await Promise.all([upstream.findDashboard(slug), uuid ? index.dashboard(uuid) : null]);
  if (!owner || owner.id === own?.id || owner.uuid === uuid) return [];
  return [
    {
      kind: 'dashboard_slug',
      detail: `slug '${slug}' now belongs to another dashboard (${owner.id}, '${owner.dashboard_title ?? ''}'), which the import would overwrite`,
      next_action: {
        action: 'rename_slug',
        description: `Change or clear the slug of dashboard ${owner.id} in Superset, then restore again`,
      },
    },
  ];
}

/** The backup's databases that are gone, each with another database of its name to take over. */
function databaseBlockers(bundle: Bundle, index: TargetIndex, dbByUuid: DatabasesByUuid): RestoreBlocker[] {
  const databases = index.databases;
  const blockers: RestoreBlocker[] = [];
  for (const f of bundle.of('databases')) {
    const dbUuid = str(f.content.uuid);
    const name = str(f.content.database_name);
    if (dbUuid && dbByUuid.has(dbUuid)) continue;
    const sameName = databases.find((d) => d.database_name === name);
    if (sameName) {
      blockers.push({
        kind: 'database',
        detail: `database '${name}' of the backup no longer exists, and another database of that name (${sameName.id}) would be taken over`,
        next_action: {
          action: 'rename_database',
          description: `Rename database ${sameName.id} ('${name}') in Superset, or recreate the original connection, then restore again`,
        },
      });
    }
  }
  return blockers;
}

/** The backup's datasets that are gone, each with another dataset on its table to take over. */
function datasetBlockers(bundle: Bundle, index: TargetIndex, dbByUuid: DatabasesByUuid): RestoreBlocker[] {
  const blockers: RestoreBlocker[] = [];
  for (const f of bundle.of('datasets')) {
    const dsUuid = str(f.content.uuid);
    if (dsUuid && index.dataset(dsUuid)) continue;
    const db = dbByUuid.get(str(f.content.database_uuid) ?? '');
    if (!db) continue; // its database is re-created too, so the table has no dataset yet
    const table = String(f.content.table_name ?? '');
    const schema = str(f.content.schema);
    const onTable = index.datasetOnTable(db.id, schema, table);
    if (onTable) {
      blockers.push({
        kind: 'dataset',
        detail: `dataset '${table}' of the backup no longer exists, and dataset ${onTable.id} on the same table of database '${db.database_name}' would be taken over`,
        next_action: {
          action: 'resolve_dataset',
          description: `Delete or rename dataset ${onTable.id} in Superset if it replaces the original, then restore again`,
        },
      });
    }
  }
  return blockers;
}
