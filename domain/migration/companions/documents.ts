/**
 * The recorded reads of a dashboard's companions → one YAML per companion under `companions/`, the
 * documents a repository (docs/git.md) and a backup (format 2, activities/backups/companions.ts)
 * keep; ./documents-replay.ts reads them back. Shared by both, so a field added here travels in
 * both (and their tests: test/git/companion-files.test.ts, test/backups/companion-format.test.ts):
 *
 *   companions/kinds.yaml                      per kind: `captured`, or why it could not be read
 *   companions/owners/<person>.yaml            the account (username, e-mail, name) and what it owns, by uuid
 *   companions/roles/<role>.yaml               a dashboard role, by name
 *   companions/tags/<tag>.yaml                 a custom tag, its description and what carries it, by uuid
 *   companions/reports/<name>.yaml             an alert or report: dashboard, chart and database by uuid, owners by person
 *   companions/annotation_layers/<name>.yaml   a layer the charts draw, its annotations, and the id the charts' params name it by
 *   companions/css_templates/<name>.yaml       a template the dashboard's CSS holds
 *   companions/saved_queries/<label>.yaml      a query behind a dataset, its database by uuid
 *   companions/themes/<uuid>.yaml              the dashboard's theme
 *   companions/embedded/<uuid>.yaml            its embedded configuration (allowed domains)
 *
 * Certification is not here: the dashboard's and charts' files carry it. Everything is sorted and
 * holds no numeric id of the environment but the one the bundle's chart params already name.
 */
import type { CompanionKindName } from '../../../contracts/companions.ts';
import { COMPANIONS_DIR, fileNameOf, toYaml } from '../../../lib/git/dashboard-files.ts';
import type { Annotation, AnnotationLayer } from '../../../lib/superset/resources/annotation-layers.ts';
import type { CssTemplate } from '../../../lib/superset/resources/css-templates.ts';
import type { EmbeddedConfig } from '../../../lib/superset/resources/embedded.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { ReportSchedule } from '../../../lib/superset/resources/reports.ts';
import type { SavedQuery } from '../../../lib/superset/resources/saved-queries.ts';
import type { Tag } from '../../../lib/superset/resources/tags.ts';
import type { Theme } from '../../../lib/superset/resources/themes.ts';
import type { UpstreamAccount } from '../../../lib/superset/types.ts';
import { type Directory, labelOf, sourceAccount } from './people.ts';
import { type Recording, recordingKey } from './recording.ts';

/** Per kind: `captured`, or why the environment would not show it. */
export type CapturedKinds = Record<CompanionKindName, string>;
export const KINDS_FILE = `${COMPANIONS_DIR}/kinds.yaml`;

export type Person = Pick<UpstreamAccount, 'username' | 'email' | 'first_name' | 'last_name' | 'display_name'>;
export interface OwnerDoc {
  account: Person;
  dashboard: boolean;
  charts: string[];
  datasets: string[];
}
export interface TagDoc {
  name: string;
  description: string | null;
  dashboard: boolean;
  charts: string[];
}
export type ReportDoc = Omit<ReportSchedule, 'id' | 'dashboard_id' | 'chart_id' | 'database_id' | 'owners'> & {
  dashboard: boolean;
  chart: string | null;
  database: string | null;
  owners: Person[];
};
export interface LayerDoc {
  name: string;
  descr: string | null;
  id_in_chart_params: number;
  annotations: Array<Omit<Annotation, 'id'>>;
}
export interface QueryDoc {
  label: string;
  description: string | null;
  database: string | null;
  schema: string | null;
  catalog: string | null;
  sql: string | null;
}
export type ThemeDoc = Omit<Theme, 'id'>;

interface Inputs {
  recording: Recording;
  dashboardId: number;
  kinds: CapturedKinds;
  /** The names each kind's items gave (which templates and queries are the dashboard's). */
  names: Map<CompanionKindName, Set<string>>;
  databases: Map<number, string>;
}

const captured = (i: Inputs, k: CompanionKindName) => i.kinds[k] === 'captured';

function answer<T>(r: Recording, resource: string, method: string, ...args: unknown[]): T | undefined {
  const hit = r[recordingKey(resource, method, args)];
  return hit && 'answer' in hit ? (hit.answer as T) : undefined;
}

const person = (a: UpstreamAccount): Person => ({
  username: a.username,
  email: a.email,
  first_name: a.first_name,
  last_name: a.last_name,
  display_name: a.display_name,
});
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

/** The recording → `path → YAML` of every companion file. */
export function companionDocs(i: Inputs): Record<string, string> {
  const out: Record<string, string> = { [KINDS_FILE]: toYaml({ kinds: i.kinds }) };
  const put = (kind: string, name: string, doc: unknown) => {
    let path = `${COMPANIONS_DIR}/${kind}/${fileNameOf(name)}.yaml`;
    for (let n = 2; out[path] !== undefined; n++) path = `${COMPANIONS_DIR}/${kind}/${fileNameOf(`${name} ${n}`)}.yaml`;
    out[path] = toYaml(doc);
  };
  const r = i.recording;
  const dashboard = answer<ObjectMeta>(r, 'meta', 'get', 'dashboard', i.dashboardId);
  if (!dashboard) return out;
  const charts = (answer<Array<{ id: number }>>(r, 'dashboards', 'charts', i.dashboardId) ?? []).flatMap(
    (c) => answer<ObjectMeta>(r, 'meta', 'get', 'chart', c.id) ?? [],
  );
  const datasets = (answer<Array<{ id: number }>>(r, 'dashboards', 'datasets', i.dashboardId) ?? []).flatMap(
    (d) => answer<ObjectMeta>(r, 'meta', 'get', 'dataset', d.id) ?? [],
  );
  const dir: Directory = { accounts: answer<{ accounts: UpstreamAccount[] }>(r, 'users', 'all')?.accounts ?? [] };
  const who = (o: ReportSchedule['owners'][number]) => sourceAccount(dir, o);
  if (captured(i, 'owners')) for (const [name, doc] of owners(dashboard, charts, datasets, who)) put('owners', name, doc);
  if (captured(i, 'roles')) for (const role of dashboard.roles) put('roles', role.name, { name: role.name });
  if (captured(i, 'tags')) for (const doc of tags(r, dashboard, charts)) put('tags', doc.name, doc);
  if (captured(i, 'reports')) for (const doc of reports(r, dashboard, charts, i.databases, who)) put('reports', doc.name, doc);
  if (captured(i, 'annotation_layers')) for (const doc of layers(r)) put('annotation_layers', doc.name, doc);
  if (captured(i, 'css_templates'))
    for (const t of answer<CssTemplate[]>(r, 'cssTemplates', 'list') ?? [])
      if (i.names.get('css_templates')?.has(t.template_name))
        put('css_templates', t.template_name, { template_name: t.template_name, css: t.css });
  if (captured(i, 'saved_queries')) for (const doc of queries(r, datasets, i)) put('saved_queries', doc.label, doc);
  if (captured(i, 'themes')) {
    const id = dashboard.theme_id ?? answer<number | null>(r, 'themes', 'ofDashboard', dashboard.id) ?? null;
    const t = (answer<Theme[]>(r, 'themes', 'list') ?? []).find((x) => x.id === id);
    if (t) put('themes', t.uuid, { uuid: t.uuid, theme_name: t.theme_name, json_data: canonicalJson(t.json_data) } satisfies ThemeDoc);
  }
  const embedded = captured(i, 'embedded') ? answer<EmbeddedConfig | null>(r, 'embedded', 'get', i.dashboardId) : null;
  if (embedded) put('embedded', embedded.uuid, { uuid: embedded.uuid, allowed_domains: sorted(embedded.allowed_domains) });
  return out;
}

/** One document per person owning the dashboard, a chart or a dataset. */
function owners(
  dashboard: ObjectMeta,
  charts: ObjectMeta[],
  datasets: ObjectMeta[],
  who: (o: ReportSchedule['owners'][number]) => UpstreamAccount,
): Map<string, OwnerDoc> {
  const docs = new Map<string, OwnerDoc>();
  const add = (o: ObjectMeta['owners'][number], on: (d: OwnerDoc) => void) => {
    const account = who(o);
    const name = labelOf(account);
    let doc = docs.get(name);
    if (!doc) docs.set(name, (doc = { account: person(account), dashboard: false, charts: [], datasets: [] }));
    on(doc);
  };
  for (const o of dashboard.owners) add(o, (d) => (d.dashboard = true));
  for (const c of charts) for (const o of c.owners) add(o, (d) => d.charts.push(c.uuid ?? ''));
  for (const s of datasets) for (const o of s.owners) add(o, (d) => d.datasets.push(s.uuid ?? ''));
  for (const d of docs.values()) [d.charts, d.datasets] = [sorted(d.charts), sorted(d.datasets)];
  return docs;
}

function tags(r: Recording, dashboard: ObjectMeta, charts: ObjectMeta[]): TagDoc[] {
  const described = new Map((answer<Tag[]>(r, 'tags', 'list') ?? []).map((t) => [t.name, t.description]));
  const names = sorted([...dashboard.tags, ...charts.flatMap((c) => c.tags)]);
  return names.map((name) => ({
    name,
    description: described.get(name) ?? null,
    dashboard: dashboard.tags.includes(name),
    charts: sorted(charts.filter((c) => c.tags.includes(name)).map((c) => c.uuid ?? '')),
  }));
}

/** Every report the kind read in full (the ones on the dashboard or its charts). */
function reports(
  r: Recording,
  dashboard: ObjectMeta,
  charts: ObjectMeta[],
  databases: Map<number, string>,
  who: (o: ReportSchedule['owners'][number]) => UpstreamAccount,
): ReportDoc[] {
  const out: ReportDoc[] = [];
  for (const [key, hit] of Object.entries(r)) {
    if (!key.startsWith('reports.get(') || !('answer' in hit)) continue;
    const { id: _id, dashboard_id, chart_id, database_id, owners: people, recipients, ...rest } = hit.answer as ReportSchedule;
    out.push({
      ...rest,
      dashboard: dashboard_id !== null && dashboard_id === dashboard.id,
      chart: chart_id !== null ? (charts.find((c) => c.id === chart_id)?.uuid ?? null) : null,
      database: database_id !== null ? (databases.get(database_id) ?? null) : null,
      owners: people.map((o) => person(who(o))).sort((a, b) => labelOf(a).localeCompare(labelOf(b))),
      recipients: [...recipients].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    });
  }
  return out;
}

function layers(r: Recording): LayerDoc[] {
  const all = answer<AnnotationLayer[]>(r, 'annotationLayers', 'list') ?? [];
  const out: LayerDoc[] = [];
  for (const [key, hit] of Object.entries(r)) {
    if (!key.startsWith('annotationLayers.annotations(') || !('answer' in hit)) continue;
    const id = Number(JSON.parse(key.slice(key.indexOf('(') + 1, -1))[0]);
    const layer = all.find((l) => l.id === id);
    if (!layer) continue;
    const annotations = (hit.answer as Annotation[])
      .map(({ id: _id, ...a }) => a)
      .sort((a, b) => `${a.start_dttm}\u0000${a.short_descr}`.localeCompare(`${b.start_dttm}\u0000${b.short_descr}`));
    out.push({ name: layer.name, descr: layer.descr, id_in_chart_params: id, annotations });
  }
  return out;
}

function queries(r: Recording, datasets: ObjectMeta[], i: Inputs): QueryDoc[] {
  const dbs = new Set(datasets.map((d) => d.database_id));
  const labels = i.names.get('saved_queries') ?? new Set();
  return (answer<SavedQuery[]>(r, 'savedQueries', 'list') ?? [])
    .filter((q) => labels.has(q.label) && dbs.has(q.db_id))
    .map((q) => ({
      label: q.label,
      description: q.description,
      database: q.db_id !== null ? (i.databases.get(q.db_id) ?? null) : null,
      schema: q.schema,
      catalog: q.catalog,
      sql: q.sql,
    }));
}

/** A theme's configuration with its keys sorted (Superset keeps the text as it was saved). */
function canonicalJson(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)), null, 2);
  } catch {
    // expected: a configuration that is not JSON is written as Superset keeps it.
    return text;
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}
