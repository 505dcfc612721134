import type { Bundle, BundleFile } from './bundle.ts';
import {
  defaultCatalogOfUri,
  remapCatalog,
  type CatalogChange,
  type TargetCatalogs,
  type UndecidedCatalog,
  type UnresolvedCatalog,
} from './catalogs.ts';

/**
 * Pure rewrites of an export bundle before it is imported into another environment. Superset's
 * importer links objects by UUID and otherwise matches databases by name, datasets by table and
 * dashboards by slug (taking over whatever it finds); these rewrites make every link explicit so
 * the importer never has to guess.
 */

export interface TargetDatabase {
  id: number;
  uuid: string;
  database_name: string;
}

export interface DatabaseRemap {
  file: string;
  source_uuid: string;
  source_name: string;
  target: TargetDatabase;
}

export interface UnmappedDatabase {
  file: string;
  uuid: string;
  database_name: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * Points every bundled database at an existing target database (its UUID exists in the target,
 * so the importer reuses it unchanged: no database is ever created or taken over), and every
 * dataset at the remapped database, its catalog following (./catalogs.ts) when `catalogsOf` knows
 * the target database's.
 */
export function remapDatabases(
  bundle: Bundle,
  lookup: (sourceUuid: string, sourceName: string) => TargetDatabase | undefined,
  catalogsOf: (target: TargetDatabase) => TargetCatalogs | undefined = () => undefined,
) {
  const remapped: DatabaseRemap[] = [];
  const unmapped: UnmappedDatabase[] = [];
  const byUuid = new Map<string, TargetDatabase>();
  const sourceDefault = new Map<string, string | null | undefined>();
  for (const f of bundle.of('databases')) {
    const uuid = str(f.content.uuid);
    const name = str(f.content.database_name);
    const target = lookup(uuid, name);
    if (!target) {
      unmapped.push({ file: f.path, uuid, database_name: name });
      continue;
    }
    byUuid.set(uuid, target);
    sourceDefault.set(uuid, defaultCatalogOfUri(f.content.sqlalchemy_uri));
    remapped.push({ file: f.path, source_uuid: uuid, source_name: name, target });
    f.content.uuid = target.uuid;
    f.content.database_name = target.database_name;
  }
  const catalogs: CatalogChange[] = [];
  const unresolvedCatalogs: UnresolvedCatalog[] = [];
  const undecidedCatalogs: UndecidedCatalog[] = [];
  for (const f of bundle.of('datasets')) {
    const sourceUuid = str(f.content.database_uuid);
    const target = byUuid.get(sourceUuid);
    if (!target) continue;
    f.content.database_uuid = target.uuid;
    const known = catalogsOf(target);
    const decided = remapCatalog(f.content.catalog, sourceDefault.get(sourceUuid), known);
    const dataset = describe(f);
    if (!known && str(f.content.catalog) && sourceDefault.get(sourceUuid) !== undefined) {
      // The catalog would follow the mapping, but nothing says what the target database's is.
      undecidedCatalogs.push({
        file: f.path,
        dataset,
        catalog: str(f.content.catalog),
        target_database: target.database_name,
        target_id: target.id,
      });
    } else if (decided && 'unresolved' in decided) {
      const catalog = str(f.content.catalog);
      unresolvedCatalogs.push({
        file: f.path,
        dataset,
        catalog,
        target_database: target.database_name,
        target_id: target.id,
        target_default: known?.default ?? null,
      });
    } else if (decided?.changed) {
      catalogs.push({ file: f.path, dataset, from: str(f.content.catalog), to: decided.catalog ?? '' });
      f.content.catalog = decided.catalog;
    }
  }
  return { remapped, unmapped, catalogs, unresolvedCatalogs, undecidedCatalogs };
}

/** Re-points a dataset UUID everywhere the bundle refers to it (dataset file, charts, native filters). */
export function replaceDatasetUuid(bundle: Bundle, from: string, to: string): void {
  for (const f of bundle.of('datasets')) if (f.content.uuid === from) f.content.uuid = to;
  for (const f of bundle.of('charts')) if (f.content.dataset_uuid === from) f.content.dataset_uuid = to;
  for (const f of bundle.of('dashboards')) {
    const filters = (
      f.content.metadata as { native_filter_configuration?: Array<{ targets?: Array<{ datasetUuid?: string }> }> } | undefined
    )?.native_filter_configuration;
    for (const nf of filters ?? []) for (const t of nf.targets ?? []) if (t.datasetUuid === from) t.datasetUuid = to;
  }
}

/** The chart UUIDs a dashboard's layout links to: the importer's only dashboard→chart link. */
export function chartUuidsOf(dashboard: BundleFile): string[] {
  const position = (dashboard.content.position ?? {}) as Record<string, { type?: string; meta?: { uuid?: string } }>;
  return Object.values(position)
    .filter((n) => n && n.type === 'CHART' && n.meta?.uuid)
    .map((n) => n.meta!.uuid!);
}

export interface DroppedField {
  file: string;
  object: string; // what the file describes, e.g. "dataset sales"
  field: string; // dotted path, list positions as numbers: columns.0.datetime_format
}

const UNKNOWN_FIELD = /^Unknown field\.?$/i;
const MISSING_FIELD = /^Missing data for required field\.?$/i;

export interface DefaultedField extends DroppedField {
  value: unknown;
}

/**
 * What a newer importer may demand that an older export does not carry, with the value the newer
 * release gives an object created without it (its schema's or model's default). Keyed by bundle
 * kind and field path (`*` for list positions). Superset 4.1.4 and 5.0.0 exports were measured to
 * import into 6.0.0 and 6.1.0 without any missing required field; this is the answer for a release
 * that does demand one, used only on the importer's own "Missing data for required field".
 */
export const REQUIRED_FIELD_DEFAULTS: Record<string, Record<string, unknown>> = {
  dashboards: { version: '1.0.0', position: {}, metadata: {}, published: false, theme_uuid: null },
  charts: { version: '1.0.0', params: {}, query_context: null, cache_timeout: null },
  datasets: {
    version: '1.0.0',
    normalize_columns: false,
    always_filter_main_dttm: false,
    filter_select_enabled: true,
    folders: null,
    'columns.*.is_dttm': false,
    'columns.*.is_active': true,
    'columns.*.groupby': true,
    'columns.*.filterable': true,
    'columns.*.datetime_format': null,
    'metrics.*.metric_type': null,
    currency_code_column: null,
  },
  databases: {
    version: '1.0.0',
    allow_file_upload: false,
    impersonate_user: false,
    configuration_method: 'sqlalchemy_form',
    allow_ctas: false,
    allow_cvas: false,
    allow_dml: false,
    allow_run_async: false,
    expose_in_sqllab: true,
    extra: {},
  },
};

/**
 * Keys that lead out of the data into JavaScript's object machinery. The field paths below come
 * from Superset's error bodies, which a broken or hostile server controls: a path through
 * `__proto__` or `constructor.prototype` would delete from Object.prototype itself.
 */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Superset's 422 names each key its schema rejects, per file, nested positions included:
 * `{"datasets/db/x.yaml": {"columns": {"0": {"datetime_format": ["Unknown field."]}}}}`.
 * Deletes exactly those keys; returns what it dropped, or [] when the errors are of another kind.
 */
export function stripRejectedFields(bundle: Bundle, errorsByFile: Record<string, unknown>): DroppedField[] {
  const dropped: DroppedField[] = [];
  for (const [file, tree] of Object.entries(errorsByFile)) {
    if (UNSAFE_KEYS.has(file)) continue;
    const f = bundle.files.get(file);
    if (!f || !tree || typeof tree !== 'object') continue;
    for (const path of unknownFieldPaths(tree as Record<string, unknown>)) {
      if (deletePath(f.content, path)) dropped.push({ file, object: describe(f), field: path.join('.') });
    }
  }
  return dropped;
}

/**
 * Superset's 422 names each required key a file lacks (`{"datasets/db/x.yaml": {"normalize_columns":
 * ["Missing data for required field."]}}`). Fills exactly those for which the newer release's
 * default is known (REQUIRED_FIELD_DEFAULTS); returns what it filled, or [] when none was known.
 */
export function fillRequiredFields(
  bundle: Bundle,
  errorsByFile: Record<string, unknown>,
  defaults: Record<string, Record<string, unknown>> = REQUIRED_FIELD_DEFAULTS,
): DefaultedField[] {
  const filled: DefaultedField[] = [];
  for (const [file, tree] of Object.entries(errorsByFile)) {
    if (UNSAFE_KEYS.has(file)) continue;
    const f = bundle.files.get(file);
    if (!f || !tree || typeof tree !== 'object') continue;
    const known = defaults[f.kind] ?? {};
    for (const path of fieldPaths(tree as Record<string, unknown>, MISSING_FIELD)) {
      const rule = path.map((k) => (/^\d+$/.test(k) ? '*' : k)).join('.');
      if (!Object.hasOwn(known, rule)) continue;
      const value = structuredClone(known[rule]);
      if (setPath(f.content, path, value)) filled.push({ file, object: describe(f), field: path.join('.'), value });
    }
  }
  return filled;
}

/** Applies rejections learned on an earlier dashboard (list positions generalised) to this bundle up front. */
export function stripKnownRejections(bundle: Bundle, known: Array<{ kind: string; field: string }>): DroppedField[] {
  const dropped: DroppedField[] = [];
  for (const rule of known) {
    for (const f of bundle.files.values()) {
      if (f.kind !== rule.kind) continue;
      for (const path of expand(f.content, rule.field.split('.'))) {
        if (deletePath(f.content, path)) dropped.push({ file: f.path, object: describe(f), field: path.join('.') });
      }
    }
  }
  return dropped;
}

/** `columns.3.datetime_format` in a datasets file becomes the rule {datasets, columns.*.datetime_format}. */
export function generalise(dropped: DroppedField[], bundle: Bundle): Array<{ kind: string; field: string }> {
  const seen = new Map<string, { kind: string; field: string }>();
  for (const d of dropped) {
    const kind = bundle.files.get(d.file)?.kind ?? d.file.split('/')[0];
    const field = d.field.replace(/(^|\.)\d+(?=\.|$)/g, '$1*');
    seen.set(`${kind}:${field}`, { kind, field });
  }
  return [...seen.values()];
}

export function describe(f: BundleFile): string {
  const c = f.content;
  switch (f.kind) {
    case 'dashboards':
      return `dashboard "${str(c.dashboard_title)}"`;
    case 'charts':
      return `chart "${str(c.slice_name)}"`;
    case 'datasets':
      return `dataset "${str(c.table_name)}"`;
    case 'databases':
      return `database "${str(c.database_name)}"`;
    default:
      return f.path;
  }
}

function unknownFieldPaths(tree: Record<string, unknown>): string[][] {
  return fieldPaths(tree, UNKNOWN_FIELD);
}

/** Paths in a marshmallow error tree whose messages all match `message`. */
function fieldPaths(tree: Record<string, unknown>, message: RegExp, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(tree)) {
    if (UNSAFE_KEYS.has(k)) continue;
    if (Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string' && message.test(m))) out.push([...prefix, k]);
    else if (v && typeof v === 'object' && !Array.isArray(v))
      out.push(...fieldPaths(v as Record<string, unknown>, message, [...prefix, k]));
  }
  return out;
}

/** Sets the key at `path` where it is missing, walking own data members only; false when its parent is not there or it exists. */
function setPath(obj: Record<string, unknown>, path: string[], value: unknown): boolean {
  if (path.length === 0 || path.some((k) => UNSAFE_KEYS.has(k))) return false;
  let cur: unknown = obj;
  for (const key of path.slice(0, -1)) {
    if (!isOwnedBy(cur, key)) return false;
    cur = (cur as Record<string, unknown>)[key];
  }
  const last = path.at(-1)!;
  if (cur === null || typeof cur !== 'object' || Object.hasOwn(cur, last)) return false;
  (cur as Record<string, unknown>)[last] = value;
  return true;
}

/** Deletes the key at `path`, walking own data members only; false when the path is not there. */
function deletePath(obj: Record<string, unknown>, path: string[]): boolean {
  if (path.length === 0 || path.some((k) => UNSAFE_KEYS.has(k))) return false;
  let cur: unknown = obj;
  for (const key of path.slice(0, -1)) {
    if (!isOwnedBy(cur, key)) return false;
    cur = (cur as Record<string, unknown>)[key];
  }
  const last = path.at(-1)!;
  if (!isOwnedBy(cur, last)) return false;
  delete (cur as Record<string, unknown>)[last];
  return true;
}

function isOwnedBy(container: unknown, key: string): boolean {
  return container !== null && typeof container === 'object' && Object.hasOwn(container, key);
}

function expand(obj: unknown, pattern: string[], prefix: string[] = []): string[][] {
  if (pattern.length === 0) return [prefix];
  if (obj === null || typeof obj !== 'object') return [];
  const [head, ...rest] = pattern;
  if (head === '*') {
    if (!Array.isArray(obj)) return [];
    return obj.flatMap((item, i) => expand(item, rest, [...prefix, String(i)]));
  }
  if (UNSAFE_KEYS.has(head) || !Object.hasOwn(obj, head)) return [];
  return rest.length === 0 ? [[...prefix, head]] : expand((obj as Record<string, unknown>)[head], rest, [...prefix, head]);
}
