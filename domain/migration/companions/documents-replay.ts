/**
 * A commit's files, or a backup's (./documents.ts wrote both) → the reads the companion kinds make
 * of a source, answered as a recording (./recording.ts replays it): so a deploy or a restore
 * applies the documents' companions with the very kinds a migration runs, compared with the target
 * by name and uuid. The ids are the replay's own, consistent across its answers: the dashboard is
 * 1, the databases are numbered as the caller says (a deploy: as its bundle source numbers them,
 * which its mappings name; a restore: as the environment does), annotation layers keep the id the
 * charts' params name them by. The bundle's files make the dashboard's, charts' and datasets' reads;
 * each kind's module replays its own documents (its `documents`, ./kind-documents.ts) onto them.
 */
import { COMPANION_KINDS, type CompanionKindReport } from '../../../contracts/companions.ts';
import { fromYaml, isCompanionPath } from '../../../lib/git/dashboard-files.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { UpstreamAccount } from '../../../lib/superset/types.ts';
import { KINDS_FILE, type CapturedKinds } from './documents.ts';
import type { Person, Replaying } from './kind-documents.ts';
import { COMPANION_KIND_MODULES } from './kinds.ts';
import { labelOf } from './people.ts';
import { type Recording, recordingKey } from './recording-key.ts';

/** The replayed dashboard's id. */
export const REPLAYED_DASHBOARD_ID = 1;

export interface Replay {
  recording: Recording;
  /** Per kind: `captured`, or why the environment the files came from would not show it. */
  kinds: CapturedKinds;
}

type Files = Map<string, string>;

function docsOf(files: Files, kind: string): unknown[] {
  return [...files]
    .filter(([p]) => p.startsWith(`companions/${kind}/`) && isCompanionPath(p))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, text]) => fromYaml(text));
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The recording a commit's (or a backup's) companion files answer; null when they hold none (made before they were kept). */
export function replayOf(files: Files, databases: Array<{ id: number; uuid: string }>): Replay | null {
  const index = files.get(KINDS_FILE);
  if (index === undefined) return null;
  const listed = (fromYaml(index).kinds ?? {}) as Partial<CapturedKinds>;
  const kinds = Object.fromEntries(COMPANION_KINDS.map((k) => [k, listed[k] ?? 'not in the repository'])) as CapturedKinds;
  const recording: Recording = {};
  const set = (resource: string, method: string, args: unknown[], answer: unknown) => {
    recording[recordingKey(resource, method, args)] = { answer };
  };
  const dbIds = new Map(databases.map((d) => [d.uuid, d.id]));
  const dbId = (uuid: string | null) => {
    if (!uuid) return null;
    if (!dbIds.has(uuid)) dbIds.set(uuid, 1000 + dbIds.size); // a database the bundle does not hold: no mapping names it
    return dbIds.get(uuid)!;
  };
  const view = bundleView(files, dbId);
  if (!view) return null;
  const accounts: UpstreamAccount[] = [];
  const ownerOf = (p: Person) => {
    let a = accounts.find((y) => labelOf(y) === labelOf(p));
    if (!a) accounts.push((a = { ...p, id: accounts.length + 1, active: true }));
    return { id: a.id, first_name: a.first_name, last_name: a.last_name, email: a.email };
  };
  const x: Replaying = { ...view, set, dbId, ownerOf };
  for (const k of COMPANION_KIND_MODULES) if (k.documents && kinds[k.kind] === 'captured') k.documents.replay(docsOf(files, k.kind), x);
  answerView(x);
  // Last: every account the owners' and reports' documents named.
  set('users', 'all', [], { accounts, usernames: true });
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

/** The dashboard, its charts and datasets from the bundle's files, before the kinds add theirs (owners, roles, tags, a theme); null: no dashboard. */
function bundleView(files: Files, dbId: Replaying['dbId']): Pick<Replaying, 'dashboard' | 'charts' | 'datasets'> | null {
  const [dash] = bundleFiles(files, 'dashboards');
  if (!dash) return null;
  const dashboard: ObjectMeta = { ...metaOf(dash, REPLAYED_DASHBOARD_ID, dash.dashboard_title), css: str(dash.css), theme_id: null };
  const charts = bundleFiles(files, 'charts').map((y, i) => ({
    ...metaOf(y, i + 1, y.slice_name),
    params: y.params && typeof y.params === 'object' ? JSON.stringify(y.params) : str(y.params),
  }));
  const datasets = bundleFiles(files, 'datasets').map((y, i) => ({
    ...metaOf(y, i + 1, y.table_name),
    database_id: dbId(str(y.database_uuid)),
    sql: str(y.sql),
    table_name: str(y.table_name),
  }));
  return { dashboard, charts, datasets };
}

/** The dashboard's view as the kinds left it: its reads answered, and the roles it names as the environment's. */
function answerView({ dashboard, charts, datasets, set }: Replaying): void {
  set('meta', 'get', ['dashboard', dashboard.id], dashboard);
  set(
    'dashboards',
    'charts',
    [dashboard.id],
    charts.map((c) => ({ id: c.id })),
  );
  set(
    'dashboards',
    'datasets',
    [dashboard.id],
    datasets.map((d) => ({ id: d.id })),
  );
  for (const c of charts) set('meta', 'get', ['chart', c.id], c);
  for (const d of datasets) set('meta', 'get', ['dataset', d.id], d);
  set('roles', 'all', [], dashboard.roles);
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
