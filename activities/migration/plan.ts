import { Bundle, BundleError } from '../../lib/bundles/bundle.ts';
import { diffObjects } from '../../lib/bundles/diff.ts';
import { chartUuidsOf, describe, remapDatabases, replaceDatasetUuid, type TargetDatabase } from '../../lib/bundles/rewrite.ts';
import type { ObjectPlan } from '../../contracts/migration.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { MigrationUpstream } from './upstream.ts';

export interface PreparedBundle {
  bundle: Bundle;
  dashboardUuid: string;
  title: string;
  chartUuids: string[];
  objects: ObjectPlan[];
  databaseMappings: Array<{ source: string; target: string; target_id: number }>;
  /** Target database id → the source database id mapped onto it. */
  sourceDatabaseIds: Map<number, number>;
  collisions: Array<{ kind: string; detail: string; resolution: string }>;
  targetDashboardId: number | null;
  /** Set when the dashboard cannot be migrated as asked; nothing was changed. */
  blocked?: { error: string; next_actions: NextAction[]; status: 'failed' | 'skipped' };
}

const kindName = { dashboards: 'dashboard', charts: 'chart', datasets: 'dataset', databases: 'database' } as const;

/**
 * Everything a migration decides before touching the target: database remapping, collision
 * pre-resolution (slug owned by another dashboard, a table that already has a dataset) and, per
 * object, whether the import would create, update, reuse or leave it unchanged, with field-level
 * differences. A dry run returns this; a real run imports the rewritten bundle.
 */
export async function prepareDashboard(opts: {
  source: MigrationUpstream;
  target: MigrationUpstream;
  sourceEnvId: string;
  targetEnvId: string;
  dashboardId: number;
  overwrite: boolean;
  /** source database id → target database id (request mappings over persisted ones). */
  mappings: Map<number, number>;
  /** Where the work is, for the failure report: `export` until the bundle is read, then `plan`. */
  progress: { step: string };
  /** Most the exported bundle may unpack to. */
  maxBundleBytes: number;
}): Promise<PreparedBundle> {
  const { source, target } = opts;
  opts.progress.step = 'export';
  const bundle = Bundle.fromZip(await source.exportDashboards([opts.dashboardId]), opts.maxBundleBytes);
  const dashboardFile = bundle.of('dashboards')[0];
  if (!dashboardFile) throw new BundleError('no_dashboard', `the export of dashboard ${opts.dashboardId} holds no dashboard`);
  opts.progress.step = 'plan';
  const dashboardUuid = String(dashboardFile.content.uuid);
  const title = String(dashboardFile.content.dashboard_title ?? '');
  const chartUuids = chartUuidsOf(dashboardFile);
  const prepared: PreparedBundle = {
    bundle,
    dashboardUuid,
    title,
    chartUuids,
    objects: [],
    databaseMappings: [],
    sourceDatabaseIds: new Map(),
    collisions: [],
    targetDashboardId: null,
  };

  // 1. Databases: every bundled database must map to an existing target database.
  const [sourceDbs, targetDbs] = await Promise.all([source.listDatabases(), target.listDatabases()]);
  const targetById = new Map(targetDbs.map((d) => [d.id, d]));
  const { remapped, unmapped } = remapDatabases(bundle, (uuid, name) => {
    const src = sourceDbs.find((d) => d.uuid === uuid) ?? sourceDbs.find((d) => d.database_name === name);
    const targetId = src ? opts.mappings.get(src.id) : undefined;
    const t = targetId !== undefined ? targetById.get(targetId) : undefined;
    if (t && src) prepared.sourceDatabaseIds.set(t.id, src.id);
    return t ? ({ id: t.id, uuid: t.uuid, database_name: t.database_name } satisfies TargetDatabase) : undefined;
  });
  prepared.databaseMappings = remapped.map((r) => ({ source: r.source_name, target: r.target.database_name, target_id: r.target.id }));
  if (unmapped.length) {
    const names = unmapped.map((u) => `'${u.database_name}'`).join(', ');
    const srcIds = unmapped.map((u) => sourceDbs.find((d) => d.uuid === u.uuid || d.database_name === u.database_name)?.id ?? null);
    const stale = srcIds.some((id) => id !== null && opts.mappings.has(id) && !targetById.has(opts.mappings.get(id)!));
    prepared.blocked = {
      status: 'failed',
      error: stale
        ? `the target database mapped for source database ${names} no longer exists in the target environment`
        : `source database ${names} has no mapping to a database of the target environment`,
      next_actions: [
        {
          action: 'map_database',
          description: `Map source database ${names} to a target database (see the suggestions), then retry this dashboard`,
          request: {
            method: 'GET',
            path: `/api/dashboards/db-mappings?source_env_id=${opts.sourceEnvId}&target_env_id=${opts.targetEnvId}`,
            body: null,
          },
        },
        {
          action: 'retry_with_mapping',
          description: 'Or pass the mapping for this run only',
          request: {
            method: 'POST',
            path: '/api/dashboards/migrate',
            body: {
              source_env_id: opts.sourceEnvId,
              target_env_id: opts.targetEnvId,
              dashboard_ids: [opts.dashboardId],
              db_mappings: srcIds
                .filter((id) => id !== null)
                .map((id) => ({ source_database_id: id, target_database_id: '<target database id>' })),
            },
          },
        },
      ],
    };
    return prepared;
  }
  for (const r of remapped) {
    prepared.objects.push({
      kind: 'database',
      file: r.file,
      name: r.target.database_name,
      uuid: r.target.uuid,
      action: 'reuse',
      target_id: r.target.id,
      note: `source database '${r.source_name}' mapped to target database '${r.target.database_name}'`,
    });
  }

  // 2. The dashboard: same UUID in the target is ours from an earlier run; a slug held by another dashboard is never taken over.
  const existing = await target.findDashboard(dashboardUuid);
  prepared.targetDashboardId = existing?.id ?? null;
  if (existing && !opts.overwrite) {
    prepared.blocked = {
      status: 'skipped',
      error: `dashboard '${title}' already exists in the target (id ${existing.id}) and overwrite is false`,
      next_actions: [
        {
          action: 'overwrite',
          description: 'Send overwrite: true to update it in place',
          request: {
            method: 'POST',
            path: '/api/dashboards/migrate',
            body: { source_env_id: opts.sourceEnvId, target_env_id: opts.targetEnvId, dashboard_ids: [opts.dashboardId], overwrite: true },
          },
        },
      ],
    };
    return prepared;
  }
  const slug = typeof dashboardFile.content.slug === 'string' && dashboardFile.content.slug ? dashboardFile.content.slug : null;
  if (slug) {
    const owner = await target.findDashboard(slug);
    if (owner && owner.uuid !== dashboardUuid) {
      dashboardFile.content.slug = null;
      prepared.collisions.push({
        kind: 'slug',
        detail: `slug '${slug}' belongs to target dashboard ${owner.id} ('${owner.dashboard_title ?? ''}')`,
        resolution: 'imported without a slug; the target dashboard was left untouched',
      });
    }
  }

  // 3. Datasets: a table that already has a dataset in the target is reused, never merged into.
  const reusedDatasets = new Set<string>();
  for (const f of bundle.of('datasets')) {
    const uuid = String(f.content.uuid);
    const db = targetDbs.find((d) => d.uuid === f.content.database_uuid);
    const byUuid = await target.findDataset({ uuid });
    if (byUuid) continue;
    const onTable = db
      ? await target.findDataset({
          databaseId: db.id,
          schema: (f.content.schema as string | null) ?? null,
          tableName: String(f.content.table_name),
        })
      : undefined;
    if (onTable && onTable.uuid) {
      replaceDatasetUuid(bundle, uuid, onTable.uuid);
      reusedDatasets.add(onTable.uuid);
      prepared.collisions.push({
        kind: 'dataset',
        detail: `table '${f.content.table_name}' already has dataset ${onTable.id} in target database '${db!.database_name}'`,
        resolution: 'charts use that dataset as it is; it was not changed',
      });
    }
  }

  // 4. Per object: create, update, unchanged or reuse, with differences against the target's own export.
  const targetFiles = existing ? Bundle.fromZip(await target.exportDashboards([existing.id]), opts.maxBundleBytes) : undefined;
  const targetByUuid = new Map<string, Record<string, unknown>>();
  for (const f of targetFiles?.files.values() ?? []) if (typeof f.content.uuid === 'string') targetByUuid.set(f.content.uuid, f.content);
  // Lookups run side by side: each is an independent Superset call.
  const candidates = [...bundle.files.values()].filter((f) => f.kind === 'dashboards' || f.kind === 'charts' || f.kind === 'datasets');
  const found = await Promise.all(
    candidates.map(async (f) => {
      const uuid = String(f.content.uuid);
      if (f.kind === 'dashboards') return { targetId: existing?.id ?? null, targetObject: targetByUuid.get(uuid) };
      const hit = f.kind === 'charts' ? await target.findChart(uuid) : await target.findDataset({ uuid });
      let targetObject = targetByUuid.get(uuid);
      if (hit && !targetObject) targetObject = (await target.exportObject(f.kind as 'charts' | 'datasets', hit.id)) ?? undefined;
      return { targetId: hit?.id ?? null, targetObject };
    }),
  );
  for (const [i, f] of candidates.entries()) {
    const uuid = String(f.content.uuid);
    const kind = kindName[f.kind as 'dashboards' | 'charts' | 'datasets'];
    const { targetId, targetObject } = found[i];
    const reused = f.kind === 'datasets' && reusedDatasets.has(uuid);
    if (targetId === null) {
      prepared.objects.push({ kind, file: f.path, name: describe(f), uuid, action: 'create', target_id: null });
      continue;
    }
    const differences = targetObject ? diffObjects(f.kind, f.content, targetObject) : [];
    const action = reused ? 'reuse' : differences.length ? 'update' : 'unchanged';
    const note =
      f.kind !== 'dashboards' && action === 'update'
        ? `exists in the target; ${opts.overwrite ? 'its definition is overwritten with the source one' : 'left as it is (overwrite is false)'}`
        : undefined;
    prepared.objects.push({
      kind,
      file: f.path,
      name: describe(f),
      uuid,
      action,
      target_id: targetId,
      differences,
      ...(note ? { note } : {}),
    });
  }
  prepared.objects.sort(
    (a, b) => ['dashboard', 'chart', 'dataset', 'database'].indexOf(a.kind) - ['dashboard', 'chart', 'dataset', 'database'].indexOf(b.kind),
  );
  return prepared;
}
