/**
 * A commit's files, or a backup's (./documents.ts wrote both) → the reads the companion kinds make
 * of a source, answered as a recording (./recording.ts replays it): so a deploy or a restore
 * applies the documents' companions with the very kinds a migration runs, compared with the target
 * by name and uuid. The ids are the replay's own, consistent across its answers: the dashboard is
 * 1, the databases are numbered as the caller says (a deploy: as its bundle source numbers them,
 * which its mappings name; a restore: as the environment does), annotation layers keep the id the
 * charts' params name them by.
 */
import { COMPANION_KINDS, type CompanionKindName, type CompanionKindReport } from '../../../contracts/companions.ts';
import { fromYaml, isCompanionPath } from '../../../lib/git/dashboard-files.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { ReportSchedule } from '../../../lib/superset/resources/reports.ts';
import type { UpstreamAccount } from '../../../lib/superset/types.ts';
import { labelOf } from './people.ts';
import { type Recording, recordingKey } from './recording.ts';
import {
  KINDS_FILE,
  type CapturedKinds,
  type LayerDoc,
  type OwnerDoc,
  type Person,
  type QueryDoc,
  type ReportDoc,
  type TagDoc,
  type ThemeDoc,
} from './documents.ts';

/** The replayed dashboard's id. */
export const REPLAYED_DASHBOARD_ID = 1;

export interface Replay {
  recording: Recording;
  /** Per kind: `captured`, or why the environment the files came from would not show it. */
  kinds: CapturedKinds;
}

type Files = Map<string, string>;

function docsOf<T>(files: Files, kind: string): T[] {
  return [...files]
    .filter(([p]) => p.startsWith(`companions/${kind}/`) && isCompanionPath(p))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, text]) => fromYaml(text) as T);
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** What the replay's answers share: the files, the kinds captured, the ids it gives databases and people. */
interface Replaying {
  files: Files;
  on(kind: CompanionKindName): boolean;
  set: Set;
  dbId(uuid: string | null): number | null;
  ownerOf(p: Person): ObjectMeta['owners'][number];
  accounts: UpstreamAccount[];
}

/** The recording a commit's (or a backup's) companion files answer; null when they hold none (made before they were kept). */
export function replayOf(files: Files, databases: Array<{ id: number; uuid: string }>): Replay | null {
  const index = files.get(KINDS_FILE);
  if (index === undefined) return null;
  const listed = (fromYaml(index).kinds ?? {}) as Partial<CapturedKinds>;
  const kinds = Object.fromEntries(COMPANION_KINDS.map((k) => [k, listed[k] ?? 'not in the repository'])) as CapturedKinds;
  const recording: Recording = {};
  const dbIds = new Map(databases.map((d) => [d.uuid, d.id]));
  const accounts: UpstreamAccount[] = [];
  const x: Replaying = {
    files,
    accounts,
    on: (k) => kinds[k] === 'captured',
    set: (resource, method, args, answer) => (recording[recordingKey(resource, method, args)] = { answer }),
    dbId: (uuid) => {
      if (!uuid) return null;
      if (!dbIds.has(uuid)) dbIds.set(uuid, 1000 + dbIds.size); // a database the bundle does not hold: no mapping names it
      return dbIds.get(uuid)!;
    },
    ownerOf: (p) => {
      let a = accounts.find((y) => labelOf(y) === labelOf(p));
      if (!a) accounts.push((a = { ...p, id: accounts.length + 1, active: true }));
      return { id: a.id, first_name: a.first_name, last_name: a.last_name, email: a.email };
    },
  };
  const charts = replayView(x);
  if (!charts) return null;
  replayLists(x, charts);
  // Last: every account the owners' and reports' documents named.
  x.set('users', 'all', [], { accounts, usernames: true });
  return { recording, kinds };
}

function bundleFiles(files: Files, kind: string): Array<Record<string, unknown>> {
  return [...files]
    .filter(([p]) => p.startsWith(`${kind}/`))
    .map(([, text]) => fromYaml(text))
    .sort((a, b) => String(a.uuid).localeCompare(String(b.uuid)));
}

function metaOf(y: Record<string, unknown>, id: number, name: unknown): ObjectMeta {
  return {
    id,
    uuid: str(y.uuid),
    name: String(name ?? ''),
    owners: [],
    roles: [],
    tags: [],
    certified_by: str(y.certified_by),
    certification_details: str(y.certification_details),
    params: null,
    css: null,
    database_id: null,
    sql: null,
    table_name: null,
  };
}

/** The dashboard's view from the bundle's files and the owners, roles and tags documents; its charts (null: no dashboard). */
function replayView(x: Replaying): ObjectMeta[] | null {
  const people = x.on('owners') ? docsOf<OwnerDoc>(x.files, 'owners') : [];
  const ownersWhere = (has: (d: OwnerDoc) => boolean) => people.filter(has).map((d) => x.ownerOf(d.account));
  const tags = x.on('tags') ? docsOf<TagDoc>(x.files, 'tags') : [];
  const [dash] = bundleFiles(x.files, 'dashboards');
  if (!dash) return null;
  const dashboard: ObjectMeta = {
    ...metaOf(dash, REPLAYED_DASHBOARD_ID, dash.dashboard_title),
    owners: ownersWhere((d) => d.dashboard),
    roles: (x.on('roles') ? docsOf<{ name: string }>(x.files, 'roles') : []).map((r, i) => ({ id: i + 1, name: r.name })),
    tags: tags.filter((t) => t.dashboard).map((t) => t.name),
    css: str(dash.css),
    theme_id: x.on('themes') && docsOf(x.files, 'themes').length ? 1 : null,
  };
  const charts = bundleFiles(x.files, 'charts').map((y, i) => ({
    ...metaOf(y, i + 1, y.slice_name),
    owners: ownersWhere((d) => d.charts.includes(String(y.uuid))),
    tags: tags.filter((t) => t.charts.includes(String(y.uuid))).map((t) => t.name),
    params: y.params && typeof y.params === 'object' ? JSON.stringify(y.params) : str(y.params),
  }));
  const datasets = bundleFiles(x.files, 'datasets').map((y, i) => ({
    ...metaOf(y, i + 1, y.table_name),
    owners: ownersWhere((d) => d.datasets.includes(String(y.uuid))),
    database_id: x.dbId(str(y.database_uuid)),
    sql: str(y.sql),
    table_name: str(y.table_name),
  }));
  x.set('meta', 'get', ['dashboard', dashboard.id], dashboard);
  x.set(
    'dashboards',
    'charts',
    [dashboard.id],
    charts.map((c) => ({ id: c.id })),
  );
  x.set(
    'dashboards',
    'datasets',
    [dashboard.id],
    datasets.map((d) => ({ id: d.id })),
  );
  for (const c of charts) x.set('meta', 'get', ['chart', c.id], c);
  for (const d of datasets) x.set('meta', 'get', ['dataset', d.id], d);
  x.set('roles', 'all', [], dashboard.roles);
  if (x.on('tags'))
    x.set(
      'tags',
      'list',
      [],
      tags.map((t, i) => ({ id: i + 1, name: t.name, description: t.description })),
    );
  return charts;
}

/** The environment's lists the kinds read, as the documents hold them. */
function replayLists(x: Replaying, charts: ObjectMeta[]): void {
  const { files, set } = x;
  if (x.on('themes'))
    set(
      'themes',
      'list',
      [],
      docsOf<ThemeDoc>(files, 'themes').map((t, i) => ({ ...t, id: i + 1 })),
    );
  if (x.on('reports')) replayReports(files, set, charts, x.ownerOf, x.dbId);
  if (x.on('annotation_layers')) replayLayers(files, set);
  if (x.on('css_templates'))
    set(
      'cssTemplates',
      'list',
      [],
      docsOf<{ template_name: string; css: string }>(files, 'css_templates').map((t, i) => ({ ...t, id: i + 1 })),
    );
  if (x.on('saved_queries'))
    set(
      'savedQueries',
      'list',
      [],
      docsOf<QueryDoc>(files, 'saved_queries').map(({ database, ...q }, i) => ({ ...q, id: i + 1, db_id: x.dbId(database) })),
    );
  if (x.on('embedded')) set('embedded', 'get', [REPLAYED_DASHBOARD_ID], docsOf(files, 'embedded')[0] ?? null);
}

type Set = (resource: string, method: string, args: unknown[], answer: unknown) => unknown;

function replayReports(
  files: Files,
  set: Set,
  charts: ObjectMeta[],
  ownerOf: (p: Person) => ReportSchedule['owners'][number],
  dbId: (uuid: string | null) => number | null,
): void {
  const docs = docsOf<ReportDoc>(files, 'reports');
  const full: ReportSchedule[] = docs.map(({ dashboard, chart, database, owners, ...rest }, i) => ({
    ...rest,
    id: i + 1,
    dashboard_id: dashboard ? REPLAYED_DASHBOARD_ID : null,
    chart_id: chart ? (charts.find((c) => c.uuid === chart)?.id ?? null) : null,
    database_id: dbId(database),
    owners: owners.map(ownerOf),
  }));
  set(
    'reports',
    'list',
    [],
    full.map((x) => ({ id: x.id, name: x.name, type: x.type, dashboard_id: x.dashboard_id, chart_id: x.chart_id })),
  );
  for (const x of full) set('reports', 'get', [x.id], x);
}

function replayLayers(files: Files, set: Set): void {
  const docs = docsOf<LayerDoc>(files, 'annotation_layers');
  set(
    'annotationLayers',
    'list',
    [],
    docs.map((l) => ({ id: l.id_in_chart_params, name: l.name, descr: l.descr })),
  );
  for (const l of docs)
    set(
      'annotationLayers',
      'annotations',
      [l.id_in_chart_params],
      l.annotations.map((a, i) => ({ ...a, id: i + 1 })),
    );
}

/** A kind the documents' environment would not show is named as such (`where` the documents were: the repository, the backup), whatever the replay found. */
export function markNotCaptured(reports: CompanionKindReport[], kinds: CapturedKinds, where: string): void {
  for (const r of reports) {
    const why = kinds[r.kind];
    if (why === 'captured') continue;
    r.available = false;
    r.unavailable = `not in ${where}: ${why}`;
  }
}
