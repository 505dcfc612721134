import { Bundle, BundleError, type BundleFile } from '../../lib/bundles/bundle.ts';
import { applyEnvRules } from '../../lib/bundles/env-rules.ts';
import type { EnvRule, EnvRuleEffect } from '../../contracts/env-rules.ts';
import { diffObjects } from '../../lib/bundles/diff.ts';
import {
  chartUuidsOf,
  describe,
  remapDatabases,
  replaceDatasetUuid,
  type TargetDatabase,
  type UnmappedDatabase,
} from '../../lib/bundles/rewrite.ts';
import type { ObjectPlan } from '../../contracts/migration.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { OutcomeWarning } from '../../contracts/migration.ts';
import { reportCatalogs } from './catalog-report.ts';
import type { TargetCatalogReads } from './target-catalogs.ts';
import type { TargetIndex } from './target-index.ts';
import type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/** The target dashboard holding a slug, as the collision check needs it. */
export interface SlugOwner {
  id: number;
  uuid: string | null;
  dashboard_title: string | null;
}

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
  /**
   * The bundle's datasets as the source knows them (uuid, database, table) and the uuid each has
   * in the target after remapping (another one when an existing target dataset is reused).
   */
  /** The sha256 of the target's own export of the dashboard as it is now (null when it is not in the target). */
  targetHash: string | null;
  datasets: Array<{ sourceUuid: string; sourceDatabaseUuid: string | null; schema: string | null; table_name: string; targetUuid: string }>;
  /** What each per-environment rule of the pair changed in the bundle (applied before anything is compared with the target). */
  envRules: EnvRuleEffect[];
  /** What the plan asks a person to do though it goes on (a dataset's catalog the target database lacks). */
  nextActions?: NextAction[];
  /** What the plan could not check though it goes on (a catalog the target would not show), with the step and what to do. */
  warnings?: OutcomeWarning[];
  /** Set when the dashboard cannot be migrated as asked; nothing was changed. */
  blocked?: { error: string; next_actions: NextAction[]; status: 'failed' | 'skipped' };
}

const kindName = { dashboards: 'dashboard', charts: 'chart', datasets: 'dataset', databases: 'database' } as const;

/** What planning a dashboard is asked: both environments, the request, and what was read ahead. */
export interface PlanOptions {
  source: MigrationUpstream;
  target: MigrationUpstream;
  /** The target's objects by uuid, slug and table, current as of this dashboard (see ./target-index.ts). */
  index: TargetIndex;
  sourceEnvId: string;
  targetEnvId: string;
  dashboardId: number;
  overwrite: boolean;
  /** source database id → target database id (request mappings over persisted ones). */
  mappings: Map<number, number>;
  /** The pair's per-environment rules, in order (lib/bundles/env-rules.ts). */
  envRules?: readonly EnvRule[];
  /** Most the exported bundle may unpack to. */
  maxBundleBytes: number;
  /**
   * Read ahead for a batch (see ./read-ahead.ts): the source's export of this dashboard, the
   * source's databases, the target's export of its dashboard by target id, and who holds a slug.
   * Each one absent is asked of Superset here.
   */
  ahead?: PlanAhead;
}

export interface PlanAhead {
  bundle?: Bundle;
  sourceDatabases?: UpstreamDatabase[];
  targetExport?: (targetDashboardId: number) => Bundle | undefined;
  slugOwner?: (slug: string) => Promise<SlugOwner | null>;
}

/** A dashboard's export, read: the bundle and its plan before any lookup (see preparedOf). */
export type ExportedDashboard = ReturnType<typeof preparedOf>;

/**
 * Everything a migration decides before touching the target: database remapping, collision
 * pre-resolution (slug owned by another dashboard, a table that already has a dataset) and, per
 * object, whether the import would create, update, reuse or leave it unchanged, with field-level
 * differences. A dry run returns this; a real run imports the rewritten bundle.
 *
 * The two steps at once, for a caller that tracks its step in `progress` (a git deploy, a release
 * publish): `export` until the bundle is read, then `plan`. The migration runs them as its own
 * steps (./plan-one.ts).
 */
export async function prepareDashboard(opts: PlanOptions & { progress: { step: string } }): Promise<PreparedBundle> {
  opts.progress.step = 'export';
  const exported = await exportDashboard(opts);
  opts.progress.step = 'plan';
  return planDashboard(exported, opts);
}

/** The export step: the dashboard's bundle (read ahead, or exported now) and what it holds. */
export async function exportDashboard(
  opts: Pick<PlanOptions, 'source' | 'dashboardId' | 'maxBundleBytes' | 'ahead'>,
): Promise<ExportedDashboard> {
  const bundle = opts.ahead?.bundle ?? Bundle.fromZip(await opts.source.exportDashboards([opts.dashboardId]), opts.maxBundleBytes);
  return preparedOf(bundle, opts.dashboardId);
}

/** The plan step: the exported dashboard planned against the target (see prepareDashboard). */
export async function planDashboard(exported: ExportedDashboard, opts: PlanOptions): Promise<PreparedBundle> {
  const { source, index } = opts;
  const ahead = opts.ahead ?? {};
  const { prepared, dashboardFile, datasetFiles } = exported;
  const bundle = prepared.bundle;

  // Charts and datasets an earlier import of this task wrote are read into the index before they are looked up.
  await index.learnWritten(bundle);

  // 1. Databases: every bundled database must map to an existing target database.
  const sourceDbs = ahead.sourceDatabases ?? (await source.listDatabases());
  // A mapped database created in the target since the index was built is read once more.
  for (const id of new Set(opts.mappings.values())) await index.database(id);
  const targetDbs = index.databases;
  await index.catalogs.readFor(bundle, sourceDbs, opts.mappings);
  remapOnto(prepared, { sourceDbs, targetDbs, mappings: opts.mappings, request: opts, catalogs: index.catalogs, envRules: opts.envRules });
  if (prepared.blocked) return prepared;
  // 1b. The pair's rules: everything below (tables, differences, the hash a rerun compares) sees the bundle as the target gets it.
  prepared.envRules = applyEnvRules(bundle, opts.envRules ?? []);

  // 2. The dashboard: same UUID in the target is ours from an earlier run; a slug held by another dashboard is never taken over.
  const existing = await index.dashboard(prepared.dashboardUuid);
  prepared.targetDashboardId = existing?.id ?? null;
  if (existing && !opts.overwrite) {
    prepared.blocked = existsBlock(prepared, existing.id, opts);
    return prepared;
  }
  await keepSlugOfOwn(prepared, dashboardFile, existing?.id, opts);

  // 3. Datasets: a table that already has a dataset in the target is reused, never merged into.
  const reusedDatasets = reuseDatasetsOnTables(prepared, index, targetDbs);
  prepared.datasets = datasetFiles.map(({ file, ...d }) => ({ ...d, targetUuid: String(file.content.uuid) }));

  // 4. Per object: create, update, unchanged or reuse, with differences against the target's own export.
  const { candidates, found } = await targetObjects(prepared, existing?.id ?? null, opts);
  planObjects(prepared, candidates, found, reusedDatasets, opts.overwrite);
  return prepared;
}

/** Step 2, overwrite false: the dashboard is in the target already, and stays as it is. */
function existsBlock(prepared: PreparedBundle, existingId: number, opts: PlanOptions): NonNullable<PreparedBundle['blocked']> {
  return {
    status: 'skipped',
    error: `dashboard '${prepared.title}' already exists in the target (id ${existingId}) and overwrite is false`,
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
}

/** Step 2: a slug another target dashboard holds is dropped from the bundle (a collision), never taken over. */
async function keepSlugOfOwn(
  prepared: PreparedBundle,
  dashboardFile: BundleFile,
  existingId: number | undefined,
  opts: PlanOptions,
): Promise<void> {
  const slug = typeof dashboardFile.content.slug === 'string' && dashboardFile.content.slug ? dashboardFile.content.slug : null;
  if (!slug) return;
  // Asked of the target itself, not the index: a slug can change hands in place at any time.
  // Releases before 6.0 answer without a uuid, so the owner is told apart by id.
  const owner = opts.ahead?.slugOwner ? await opts.ahead.slugOwner(slug) : await opts.target.findDashboard(slug);
  if (owner && owner.id !== existingId && owner.uuid !== prepared.dashboardUuid) {
    dashboardFile.content.slug = null;
    prepared.collisions.push({
      kind: 'slug',
      detail: `slug '${slug}' belongs to target dashboard ${owner.id} ('${owner.dashboard_title ?? ''}')`,
      resolution: 'imported without a slug; the target dashboard was left untouched',
    });
  }
}

/** Step 3: each bundled dataset whose table already has another dataset in the target points at that one. Returns the reused uuids. */
function reuseDatasetsOnTables(prepared: PreparedBundle, index: TargetIndex, targetDbs: readonly UpstreamDatabase[]): Set<string> {
  const { bundle } = prepared;
  const reusedDatasets = new Set<string>();
  for (const f of bundle.of('datasets')) {
    const uuid = String(f.content.uuid);
    const db = targetDbs.find((d) => d.uuid === f.content.database_uuid);
    if (index.dataset(uuid)) continue;
    const onTable = db ? index.datasetOnTable(db.id, (f.content.schema as string | null) ?? null, String(f.content.table_name)) : null;
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
  return reusedDatasets;
}

/**
 * Step 4's lookups: the bundle's dashboard, chart and dataset files, each with its target id and
 * the target's own YAML of it (the target dashboard's export, then one export per kind for
 * existing objects that export does not hold).
 */
async function targetObjects(prepared: PreparedBundle, existingId: number | null, opts: PlanOptions) {
  const { index, target } = opts;
  const targetFiles =
    existingId !== null
      ? (opts.ahead?.targetExport?.(existingId) ?? Bundle.fromZip(await target.exportDashboards([existingId]), opts.maxBundleBytes))
      : undefined;
  prepared.targetHash = targetFiles?.contentHash() ?? null;
  const targetByUuid = new Map<string, Record<string, unknown>>();
  for (const f of targetFiles?.files.values() ?? []) if (typeof f.content.uuid === 'string') targetByUuid.set(f.content.uuid, f.content);
  const candidates = [...prepared.bundle.files.values()].filter(
    (f) => f.kind === 'dashboards' || f.kind === 'charts' || f.kind === 'datasets',
  );
  // Existing charts and datasets the target dashboard's export does not hold: one export per kind.
  for (const kind of ['chart', 'dataset'] as const) {
    const uuids = candidates
      .filter((f) => f.kind === `${kind}s`)
      .map((f) => String(f.content.uuid))
      .filter((uuid) => !targetByUuid.has(uuid) && (kind === 'chart' ? index.chart(uuid) : index.dataset(uuid)));
    if (uuids.length) for (const [uuid, content] of await index.exportedContent(kind, uuids)) targetByUuid.set(uuid, content);
  }
  const found = candidates.map((f) => {
    const uuid = String(f.content.uuid);
    if (f.kind === 'dashboards') return { targetId: existingId, targetObject: targetByUuid.get(uuid) };
    const hit = f.kind === 'charts' ? index.chart(uuid) : index.dataset(uuid);
    return { targetId: hit?.id ?? null, targetObject: targetByUuid.get(uuid) };
  });
  return { candidates, found };
}

/** A bundle's plan before any lookup: its dashboard, charts and the source's identity of each dataset. */
export function preparedOf(bundle: Bundle, dashboardId: number) {
  const dashboardFile = bundle.of('dashboards')[0];
  if (!dashboardFile) throw new BundleError('no_dashboard', `the export of dashboard ${dashboardId} holds no dashboard`);
  const prepared: PreparedBundle = {
    bundle,
    dashboardUuid: String(dashboardFile.content.uuid),
    title: String(dashboardFile.content.dashboard_title ?? ''),
    chartUuids: chartUuidsOf(dashboardFile),
    objects: [],
    databaseMappings: [],
    sourceDatabaseIds: new Map(),
    collisions: [],
    targetDashboardId: null,
    targetHash: null,
    datasets: [],
    envRules: [],
  };
  // Before any rewrite: the source's own identity of each dataset (row-level security is read by it).
  const datasetFiles = bundle.of('datasets').map((f) => ({
    file: f,
    sourceUuid: String(f.content.uuid),
    sourceDatabaseUuid: typeof f.content.database_uuid === 'string' ? f.content.database_uuid : null,
    schema: typeof f.content.schema === 'string' && f.content.schema ? f.content.schema : null,
    table_name: String(f.content.table_name ?? ''),
  }));
  return { prepared, dashboardFile, datasetFiles };
}

/**
 * Step 1 of a plan: every bundled database rewritten onto the target database its source database
 * is mapped to, or the plan blocked (nothing changed) when one has no mapping or its mapped
 * database is gone.
 */
export function remapOnto(
  prepared: PreparedBundle,
  opts: {
    sourceDbs: readonly UpstreamDatabase[];
    targetDbs: readonly UpstreamDatabase[];
    mappings: Map<number, number>;
    request: { sourceEnvId: string; targetEnvId: string; dashboardId: number };
    /** The target databases' catalogs as read for this bundle (see ./target-catalogs.ts); absent: catalogs stay as exported. */
    catalogs?: Pick<TargetCatalogReads, 'known'> & Partial<Pick<TargetCatalogReads, 'refusal'>>;
    /** The pair's rules: a catalog a `catalog` rule renames is not reported as missing (the rule applies after). */
    envRules?: readonly EnvRule[];
  },
): void {
  const { sourceDbs, mappings } = opts;
  const targetById = new Map(opts.targetDbs.map((d) => [d.id, d]));
  const { remapped, unmapped, catalogs, unresolvedCatalogs, undecidedCatalogs } = remapDatabases(
    prepared.bundle,
    (uuid, name) => {
      const src = sourceDbs.find((d) => d.uuid === uuid) ?? sourceDbs.find((d) => d.database_name === name);
      const targetId = src ? mappings.get(src.id) : undefined;
      const t = targetId !== undefined ? targetById.get(targetId) : undefined;
      if (t && src) prepared.sourceDatabaseIds.set(t.id, src.id);
      return t ? ({ id: t.id, uuid: t.uuid, database_name: t.database_name } satisfies TargetDatabase) : undefined;
    },
    (t) => opts.catalogs?.known(t.id),
  );
  prepared.databaseMappings = remapped.map((r) => ({ source: r.source_name, target: r.target.database_name, target_id: r.target.id }));
  if (unmapped.length) {
    prepared.blocked = unmappedBlock(unmapped, { sourceDbs, mappings, targetById, request: opts.request });
    return;
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
  reportCatalogs(prepared, { changes: catalogs, unresolved: unresolvedCatalogs, undecided: undecidedCatalogs }, opts);
}

/**
 * Step 1, a bundled database without a target database: what to map, or to pass for this run.
 * A mapping whose target database was deleted since is told apart from no mapping at all.
 */
function unmappedBlock(
  unmapped: readonly UnmappedDatabase[],
  opts: {
    sourceDbs: readonly UpstreamDatabase[];
    mappings: Map<number, number>;
    targetById: ReadonlyMap<number, UpstreamDatabase>;
    request: { sourceEnvId: string; targetEnvId: string; dashboardId: number };
  },
): NonNullable<PreparedBundle['blocked']> {
  const { sourceDbs, mappings, targetById } = opts;
  const { sourceEnvId, targetEnvId, dashboardId } = opts.request;
  const names = unmapped.map((u) => `'${u.database_name}'`).join(', ');
  const srcIds = unmapped.map((u) => sourceDbs.find((d) => d.uuid === u.uuid || d.database_name === u.database_name)?.id ?? null);
  const stale = srcIds.some((id) => id !== null && mappings.has(id) && !targetById.has(mappings.get(id)!));
  return {
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
          path: `/api/dashboards/db-mappings?source_env_id=${sourceEnvId}&target_env_id=${targetEnvId}`,
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
            source_env_id: sourceEnvId,
            target_env_id: targetEnvId,
            dashboard_ids: [dashboardId],
            db_mappings: srcIds
              .filter((id) => id !== null)
              .map((id) => ({ source_database_id: id, target_database_id: '<target database id>' })),
          },
        },
      },
    ],
  };
}

/**
 * The last step of a plan: per dashboard, chart and dataset file, whether the import creates,
 * updates, reuses or leaves it unchanged, with field differences against the target's own YAML
 * (`found`, in the order of `candidates`). Objects end sorted dashboard, charts, datasets, databases.
 */
export function planObjects(
  prepared: PreparedBundle,
  candidates: BundleFile[],
  found: Array<{ targetId: number | null; targetObject: Record<string, unknown> | undefined }>,
  reusedDatasets: ReadonlySet<string>,
  overwrite: boolean,
): void {
  for (const [i, f] of candidates.entries()) {
    const uuid = String(f.content.uuid);
    const kind = kindName[f.kind as 'dashboards' | 'charts' | 'datasets'];
    const { targetId, targetObject } = found[i]!;
    const reused = f.kind === 'datasets' && reusedDatasets.has(uuid);
    if (targetId === null) {
      prepared.objects.push({ kind, file: f.path, name: describe(f), uuid, action: 'create', target_id: null });
      continue;
    }
    const differences = targetObject ? diffObjects(f.kind, f.content, targetObject) : [];
    const action = reused ? 'reuse' : differences.length ? 'update' : 'unchanged';
    const note =
      f.kind !== 'dashboards' && action === 'update'
        ? `exists in the target; ${overwrite ? 'its definition is overwritten with the source one' : 'left as it is (overwrite is false)'}`
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
}
