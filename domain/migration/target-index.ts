import type { Bundle } from '../../lib/bundles/bundle.ts';
import { SupersetApiError } from '../../lib/superset/errors.ts';
import type { RlsRule, UpstreamRole } from '../../lib/superset/types.ts';
import { TargetCatalogReads } from './target-catalogs.ts';
import type { IndexedResource, MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/**
 * The target's dashboards, charts, datasets and databases, looked up once and matched in memory
 * by uuid, slug and table, so planning a dashboard costs no call per object.
 *
 * Built from what every release answers: list rows with only the needed columns (no list filter
 * on `uuid`, which releases before 6.0 refuse). Where a release's lists carry no uuid (its rows
 * show it), uuids come from the objects' exports
 * (charts: the file name ends in the chart id; datasets: matched on database, schema and table,
 * which Superset keeps unique) and dashboards are looked up by uuid on their detail path.
 *
 * `refresh()` reads only what was created since (ids above the highest known, one list call per
 * kind; a release that refuses the `id` filter answers 400 once, and its lists are read whole from
 * then on), so the index stays current as imports land and as other people create objects while
 * a task runs. Dashboards changed in place (a slug that changed hands) are read through
 * `refreshDashboardsChanged()`; what an import of the task wrote, through `learnWritten()`.
 *
 *   const index = await TargetIndex.build(upstream);
 *   index.chart(uuid)?.id; index.datasetOnTable(dbId, schema, table); await index.refresh();
 */

export interface IndexedDashboard {
  id: number;
  uuid: string | null;
  slug: string | null;
  title: string | null;
}

export interface IndexedChart {
  id: number;
  uuid: string;
}

export interface IndexedDataset {
  id: number;
  uuid: string | null;
  table_name: string;
  schema: string | null;
  database: { id: number; name: string } | null;
}

/** How the index learned uuids, per kind: from list rows, or through exports / detail lookups. */
export type UuidSource = 'list' | 'export' | 'detail';

const COLUMNS: Record<IndexedResource, string[]> = {
  dashboard: ['id', 'uuid', 'slug', 'dashboard_title', 'changed_on_utc'],
  chart: ['id', 'uuid'],
  dataset: ['id', 'uuid', 'table_name', 'schema', 'database.id', 'database.database_name'],
};

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

export interface IndexOptions {
  /** The kinds to list (a migration's source index lists none: its datasets only once it has rules, see include). */
  kinds?: readonly IndexedResource[];
  /**
   * Read the instance's row-level-security rules ahead (a migration needs them): `always`, beside
   * the lists; `withDatasets`, once the dataset list shows the instance has any dataset (a rule only
   * matters on a dataset there, so a target without one is spared the read until a write needs it).
   */
  rls?: 'always' | 'withDatasets';
}

export class TargetIndex {
  private readonly upstream: MigrationUpstream;
  private databaseList: UpstreamDatabase[] = [];
  private readonly dashboards = new Map<number, IndexedDashboard>();
  private readonly charts = new Map<number, IndexedChart>();
  private readonly datasets = new Map<number, IndexedDataset>();
  private readonly dashboardByUuid = new Map<string, IndexedDashboard | null>();
  private readonly chartByUuid = new Map<string, IndexedChart>();
  private readonly datasetByUuid = new Map<string, IndexedDataset>();
  /** Exported YAML of charts and datasets read while indexing, by uuid (reused for differences). */
  private readonly exported = new Map<string, Record<string, unknown>>();
  private readonly maxId: Record<IndexedResource, number> = { dashboard: 0, chart: 0, dataset: 0 };
  private incremental = false;
  /** The latest `changed_on_utc` of a dashboard read (null: the release's rows do not say). */
  private dashboardsChangedUpTo: string | null = null;
  /** When the dashboard list was last read whole (ms; 0: never). */
  private dashboardsListedAt = 0;
  /** The dashboard list was empty when first read. */
  private listedEmpty = false;
  /** The kinds this index lists (see IndexOptions.kinds and include). */
  private kinds: readonly IndexedResource[] = ['dashboard', 'chart', 'dataset'];
  /** Kinds listed after the build (include), while their list is read. */
  private readonly including = new Map<IndexedResource, Promise<void>>();
  private rls?: Promise<RlsRule[]>;
  /** The rules are read ahead once the dataset list shows a dataset (IndexOptions.rls). */
  private rlsWithDatasets = false;
  private roles?: Promise<UpstreamRole[]>;
  readonly uuidSource: Record<IndexedResource, UuidSource> = { dashboard: 'list', chart: 'list', dataset: 'list' };
  /** Superset calls made by build() and refresh(), for logs and benchmarks. */
  calls = 0;
  /** The databases' catalogs, read once per task where a bundle's datasets need them. */
  readonly catalogs: TargetCatalogReads;

  private constructor(upstream: MigrationUpstream) {
    this.upstream = upstream;
    this.catalogs = new TargetCatalogReads(upstream);
  }

  /** Reads the instance once: its databases and, side by side, every dashboard, chart and dataset of the kinds asked for (needed columns only). */
  static async build(upstream: MigrationUpstream, opts: IndexOptions = {}): Promise<TargetIndex> {
    const index = new TargetIndex(upstream);
    if (opts.kinds) index.kinds = opts.kinds;
    // expected: asked for beside the lists; a failure is met again by whoever reads the rules.
    if (opts.rls === 'always') index.rlsRules().catch(() => undefined);
    index.rlsWithDatasets = opts.rls === 'withDatasets';
    // What the release can do is learned from its answers, not probed first: rows without a uuid
    // (load), a refused `id` filter (load). The capability probe costs several calls per instance.
    index.incremental = true;
    // Different list endpoints side by side (calls to one endpoint stay one after another in the
    // client); matching dataset exports to rows (releases whose lists carry no uuid) waits for the databases.
    index.databasesRead = index.reloadDatabases();
    await Promise.all([index.databasesRead, ...index.kinds.map((k) => index.load(k))]);
    return index;
  }

  private readAt = Date.now();
  /** The build's read of the databases (the dataset exports of older releases are matched by them). */
  private databasesRead?: Promise<void>;
  /** Charts and datasets an import of this task wrote, by uuid, that the index may not have read yet. */
  private readonly written: Record<'chart' | 'dataset', Set<string>> = { chart: new Set(), dataset: new Set() };

  /** Picks up objects created since the last read (by an import of this task or by anyone else). */
  async refresh(): Promise<void> {
    this.readAt = Date.now();
    this.written.chart.clear();
    this.written.dataset.clear();
    // Dashboards not found by uuid may exist now.
    for (const [uuid, d] of this.dashboardByUuid) if (d === null) this.dashboardByUuid.delete(uuid);
    // Different list endpoints side by side, as the build reads them (each load meets a release that refuses an `id` filter on its own).
    await Promise.all(this.kinds.map((r) => this.load(r, this.incremental ? this.maxId[r] : undefined)));
  }

  /**
   * The instance's row-level-security rules, read once (a failed read is tried again next time).
   * Rules this task writes are recorded with noteRlsRule, so the index stays current without a re-read.
   */
  async rlsRules(): Promise<readonly RlsRule[]> {
    if (!this.rls) {
      this.calls++;
      this.rls = this.upstream.rlsRules();
      this.rls.catch(() => (this.rls = undefined)); // expected: only forgotten here; whoever awaits it meets the error
    }
    return this.rls;
  }

  /** The roles a rule may name, read once. */
  async rlsRoles(): Promise<readonly UpstreamRole[]> {
    if (!this.roles) {
      this.calls++;
      this.roles = this.upstream.rlsRoles();
      this.roles.catch(() => (this.roles = undefined)); // expected: only forgotten here; whoever awaits it meets the error
    }
    return this.roles;
  }

  /** Lists a kind this index was built without, once (a source's datasets, when it has rules). */
  async include(kind: IndexedResource): Promise<void> {
    if (this.kinds.includes(kind)) return this.including.get(kind);
    this.kinds = [...this.kinds, kind];
    const loaded = this.load(kind).then(() => undefined);
    this.including.set(kind, loaded);
    loaded.catch(() => {
      // expected: not listed after all: the next caller tries again (the caller awaiting `loaded` meets the error).
      this.kinds = this.kinds.filter((k) => k !== kind);
      this.including.delete(kind);
    });
    return loaded;
  }

  /** Lists every kind this index was built without (a target first read for its databases and rules only). */
  async includeAll(): Promise<void> {
    await Promise.all((['dashboard', 'chart', 'dataset'] as const).map((k) => this.include(k)));
  }

  /** Records a rule this task created or updated. */
  async noteRlsRule(rule: RlsRule): Promise<void> {
    const rules = [...(await this.rlsRules())].filter((r) => r.id !== rule.id);
    this.rls = Promise.resolve([...rules, rule]);
  }

  datasetById(id: number): IndexedDataset | null {
    return this.datasets.get(id) ?? null;
  }

  get databases(): readonly UpstreamDatabase[] {
    return this.databaseList;
  }

  /** The instance's databases, read again once when one of these uuids is unknown (created since). */
  async databasesCovering(uuids: Iterable<string>): Promise<readonly UpstreamDatabase[]> {
    const known = new Set(this.databaseList.map((d) => d.uuid));
    for (const uuid of uuids) {
      if (known.has(uuid)) continue;
      await this.reloadDatabases();
      break;
    }
    return this.databaseList;
  }

  /** A target database by id; the list is read again once when the id is unknown (created since). */
  async database(id: number): Promise<UpstreamDatabase | undefined> {
    const hit = this.databaseList.find((d) => d.id === id);
    if (hit) return hit;
    await this.reloadDatabases();
    return this.databaseList.find((d) => d.id === id);
  }

  /** The dashboard with this uuid (from the list, or its detail path where lists carry no uuid). */
  async dashboard(uuid: string): Promise<IndexedDashboard | null> {
    const known = this.dashboardByUuid.get(uuid);
    if (known !== undefined || this.uuidSource.dashboard === 'list') return known ?? null;
    this.calls++;
    const found = await this.upstream.findDashboard(uuid);
    const hit = found ? { ...(this.dashboards.get(found.id) ?? toDashboard(found)), uuid } : null;
    if (hit) this.dashboards.set(hit.id, hit);
    this.dashboardByUuid.set(uuid, hit);
    return hit;
  }

  /** Whether the index knows a dashboard with this id. */
  hasDashboard(id: number): boolean {
    return this.dashboards.has(id);
  }

  dashboardBySlug(slug: string): IndexedDashboard | null {
    for (const d of this.dashboards.values()) if (d.slug === slug) return d;
    return null;
  }

  chart(uuid: string): IndexedChart | null {
    return this.chartByUuid.get(uuid) ?? null;
  }

  dataset(uuid: string): IndexedDataset | null {
    return this.datasetByUuid.get(uuid) ?? null;
  }

  /** The dataset on this table of this database (Superset allows one per database, schema and table). */
  datasetOnTable(databaseId: number, schema: string | null, tableName: string): IndexedDataset | null {
    for (const d of this.datasets.values()) {
      if (d.database?.id === databaseId && d.table_name === tableName && (d.schema ?? null) === (schema ?? null)) return d;
    }
    return null;
  }

  /** Every dataset on a table of this name, whatever its database. */
  datasetsNamed(tableName: string): IndexedDataset[] {
    return [...this.datasets.values()].filter((d) => d.table_name === tableName);
  }

  /**
   * The target's own YAML of these charts or datasets (for differences), by uuid: from what the
   * index already exported, the rest in one export call per kind.
   */
  async exportedContent(kind: 'chart' | 'dataset', uuids: string[]): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    const missing: number[] = [];
    for (const uuid of uuids) {
      const content = this.exported.get(uuid);
      if (content) out.set(uuid, content);
      else {
        const id = kind === 'chart' ? this.chart(uuid)?.id : this.dataset(uuid)?.id;
        if (id !== undefined) missing.push(id);
      }
    }
    if (!missing.length) return out;
    this.calls++;
    for (const bundle of await this.upstream.exportObjects(kind, missing)) {
      for (const f of bundle.of(kind === 'chart' ? 'charts' : 'datasets')) {
        const uuid = str(f.content.uuid);
        if (!uuid) continue;
        // Kept (and replaced by what an import of this task writes): dashboards sharing a dataset read it once.
        this.exported.set(uuid, f.content);
        if (uuids.includes(uuid)) out.set(uuid, f.content);
      }
    }
    return out;
  }

  private async reloadDatabases(): Promise<void> {
    this.calls++;
    this.databaseList = await this.upstream.listDatabases();
  }

  /** Lists a kind (past `afterId` when given) into the index; answers the rows, with `alsoColumns` for a caller that needs more of them. */
  private async load(
    resource: IndexedResource,
    afterId?: number,
    alsoColumns: readonly string[] = [],
  ): Promise<Array<Record<string, unknown> & { id: number }>> {
    this.calls++;
    const readAt = Date.now();
    const columns = [...new Set([...COLUMNS[resource], ...alsoColumns])];
    let rows: Array<Record<string, unknown> & { id: number }>;
    try {
      rows = await this.upstream.listRows(resource, columns, afterId);
    } catch (err) {
      // A release that does not filter this list on `id` says so with a 400: from now on, lists are read whole.
      if (afterId === undefined || !(err instanceof SupersetApiError) || err.upstreamStatus !== 400) throw err;
      this.incremental = false;
      this.calls++;
      rows = await this.upstream.listRows(resource, columns);
    }
    // A release whose lists carry no uuid shows it in its rows even where the probe could not tell.
    if (this.uuidSource[resource] === 'list' && rows.length && rows.some((r) => !str(r.uuid))) {
      this.uuidSource[resource] = resource === 'dashboard' ? 'detail' : 'export';
    }
    for (const r of rows) this.maxId[resource] = Math.max(this.maxId[resource], r.id);
    if (resource === 'dashboard') {
      for (const r of rows) this.addDashboardRow(r);
      // Only a whole list is current for slugs (one read past the highest id sees new rows only).
      if (afterId === undefined) {
        if (!this.dashboardsListedAt) this.listedEmpty = rows.length === 0;
        this.dashboardsListedAt = readAt;
      }
      return rows;
    }
    if (resource === 'chart') {
      if (this.uuidSource.chart === 'list') {
        for (const r of rows) this.addChart({ id: r.id, uuid: String(r.uuid) });
      } else if (rows.length) {
        await this.chartsFromExports(rows.map((r) => r.id));
      }
      return rows;
    }
    const datasets = rows.map((r) => toDataset(r));
    for (const d of datasets) this.addDataset(d);
    if (this.rlsWithDatasets && this.datasets.size) this.rlsRules().catch(() => undefined); // expected: met again by whoever reads the rules
    if (this.uuidSource.dataset === 'export' && datasets.length) await this.datasetUuidsFromExports(datasets);
    return rows;
  }

  private addDashboardRow(r: Record<string, unknown> & { id: number }): void {
    const before = this.dashboards.get(r.id);
    const d = toDashboard(r);
    if (before?.uuid && !d.uuid) d.uuid = before.uuid;
    this.dashboards.set(d.id, d);
    if (d.uuid) this.dashboardByUuid.set(d.uuid, d);
    const changed = str(r.changed_on_utc);
    if (changed && (!this.dashboardsChangedUpTo || changed > this.dashboardsChangedUpTo)) this.dashboardsChangedUpTo = changed;
  }

  /**
   * Reads the dashboards changed since the last read (most recently changed first, until one
   * older than what the index has seen), so slugs that changed hands in place are current.
   * One list call when little changed; none when the list was read at or after `readSince` (ms).
   * False when the release's rows carry no change time: then slugs must be asked of the target.
   */
  async refreshDashboardsChanged(pageSize = 100, readSince?: number): Promise<boolean> {
    const since = this.dashboardsChangedUpTo;
    if (this.uuidSource.dashboard !== 'list' || !this.kinds.includes('dashboard')) return false;
    if (readSince !== undefined && this.dashboardsListedAt >= readSince) return true;
    // A target that had no dashboard when it was first read (a first migration into it): until a
    // change time is seen, every dashboard there is new, so the pages are read to their end.
    const readAll = !since && this.listedEmpty;
    if (!since && !readAll) return false;
    for (let page = 0; ; page++) {
      this.calls++;
      const rows = await this.upstream.recentDashboards(page, pageSize);
      if (!readAll && rows.some((r) => !str(r.changed_on_utc))) return false;
      for (const r of rows) this.addDashboardRow(r);
      if (rows.length < pageSize || (since && rows.some((r) => String(r.changed_on_utc) < since))) return true;
    }
  }

  private addChart(c: IndexedChart): void {
    this.charts.set(c.id, c);
    this.chartByUuid.set(c.uuid, c);
  }

  private addDataset(d: IndexedDataset): void {
    const before = this.datasets.get(d.id);
    const merged = { ...d, uuid: d.uuid ?? before?.uuid ?? null };
    this.datasets.set(d.id, merged);
    if (merged.uuid) this.datasetByUuid.set(merged.uuid, merged);
  }

  /** Chart exports name each file `<name>_<id>.yaml` (or `<id>.yaml`): the id there, the uuid inside. */
  private async chartsFromExports(ids: number[]): Promise<void> {
    this.calls++;
    for (const bundle of await this.upstream.exportObjects('chart', ids)) {
      for (const f of bundle.of('charts')) {
        const id = Number(/(?:^|_)(\d+)\.ya?ml$/.exec(f.path.split('/').pop() ?? '')?.[1]);
        const uuid = str(f.content.uuid);
        if (!uuid || !ids.includes(id)) continue;
        this.addChart({ id, uuid });
        this.exported.set(uuid, f.content);
      }
    }
  }

  /** Dataset exports carry no id before 6.0: each file is matched to its row on database, schema and table. */
  private async datasetUuidsFromExports(rows: IndexedDataset[]): Promise<void> {
    this.calls++;
    await this.databasesRead;
    const dbByUuid = new Map(this.databaseList.map((d) => [d.uuid, d]));
    for (const bundle of await this.upstream.exportObjects(
      'dataset',
      rows.map((r) => r.id),
    )) {
      for (const f of bundle.of('datasets')) {
        const uuid = str(f.content.uuid);
        const db = dbByUuid.get(str(f.content.database_uuid) ?? '');
        if (!uuid || !db) continue;
        const row = rows.find(
          (r) =>
            r.database?.id === db.id && r.table_name === f.content.table_name && (r.schema ?? null) === (str(f.content.schema) ?? null),
        );
        if (!row) continue;
        this.addDataset({ ...row, uuid });
        this.exported.set(uuid, f.content);
      }
    }
  }

  /** Whether a full refresh is due: once the last read is older than `maxAgeMs` (others create objects too). */
  due(maxAgeMs: number): boolean {
    // An index of a source (datasets, for row-level security) is changed by nobody in this task: read again less often.
    const age = this.kinds.includes('dashboard') ? maxAgeMs : maxAgeMs * 12;
    return Date.now() - this.readAt > age;
  }

  /**
   * Reads the dashboards created since the last read (one list call where the release filters on
   * id) and answers their rows, with `alsoColumns` for a caller that reads them next (the
   * companions' views of dashboards just imported, which then need no list of their own).
   */
  async refreshDashboards(alsoColumns: readonly string[] = []): Promise<Array<Record<string, unknown> & { id: number }>> {
    for (const [uuid, d] of this.dashboardByUuid) if (d === null) this.dashboardByUuid.delete(uuid);
    return this.load('dashboard', this.incremental ? this.maxId.dashboard : undefined, alsoColumns);
  }

  /**
   * Before a bundle is planned: the charts and datasets of it that an import of this task wrote
   * and the index has not read yet are read now (one list call per kind, objects created since),
   * so a dataset the previous dashboard created is seen as the existing one it is.
   */
  async learnWritten(bundle: Bundle): Promise<void> {
    for (const [kind, folder] of [
      ['dataset', 'datasets'],
      ['chart', 'charts'],
    ] as const) {
      if (!this.written[kind].size || !this.kinds.includes(kind)) continue;
      const lookup = kind === 'chart' ? this.chartByUuid : this.datasetByUuid;
      const unread = bundle.of(folder).some((f) => {
        const uuid = str(f.content.uuid);
        return uuid !== null && this.written[kind].has(uuid) && !lookup.has(uuid);
      });
      if (!unread) continue;
      this.written[kind].clear();
      await this.load(kind, this.incremental ? this.maxId[kind] : undefined);
    }
  }

  /** Records what an import just did, so the next dashboard sees it before the next refresh. */
  noteDashboard(d: IndexedDashboard): void {
    this.dashboards.set(d.id, d);
    if (d.uuid) this.dashboardByUuid.set(d.uuid, d);
  }

  /**
   * Records what an import of this task wrote: its charts and datasets hold, in the target, the
   * content just imported (kept as the target's content for the differences of later dashboards
   * sharing them), and their ids are read when a later bundle needs them (learnWritten).
   */
  noteImportedContent(bundle: Bundle): void {
    for (const f of bundle.files.values()) {
      const uuid = str(f.content.uuid);
      if (!uuid || (f.kind !== 'charts' && f.kind !== 'datasets')) continue;
      this.exported.set(uuid, structuredClone(f.content));
      this.written[f.kind === 'charts' ? 'chart' : 'dataset'].add(uuid);
    }
  }
}

function toDashboard(r: Record<string, unknown> & { id: number }): IndexedDashboard {
  return { id: r.id, uuid: str(r.uuid), slug: str(r.slug), title: str(r.dashboard_title) };
}

function toDataset(r: Record<string, unknown> & { id: number }): IndexedDataset {
  const db = r.database as { id?: unknown; database_name?: unknown } | null | undefined;
  return {
    id: r.id,
    uuid: str(r.uuid),
    table_name: String(r.table_name ?? ''),
    schema: str(r.schema),
    database: db && typeof db.id === 'number' ? { id: db.id, name: String(db.database_name ?? '') } : null,
  };
}
