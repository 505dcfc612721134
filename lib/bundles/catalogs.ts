/**
 * A dataset's `catalog` when its database is remapped onto another environment's. Superset
 * (4.1 and later, every release of the version matrix) exports a dataset's catalog, and for
 * PostgreSQL the catalog is the database the connection opens: a dataset imported with the dev
 * database's name as its catalog would read dev's database from prod whenever both live on one
 * server. So the catalog follows the database mapping here, before any per-environment rule.
 */

/** What the target says of a database's catalogs: its default, and (when asked) the catalogs it lists. */
export interface TargetCatalogs {
  /** The catalog Superset connects to by default; null when the engine has none. */
  default: string | null;
  /** Every catalog the target lists for the database (its catalogs endpoint); absent when not read. */
  names?: readonly string[];
}

export interface CatalogChange {
  file: string;
  dataset: string;
  from: string;
  to: string;
}

export interface UnresolvedCatalog {
  file: string;
  dataset: string;
  catalog: string;
  target_database: string;
  target_id: number;
  /** The target database's default catalog, the likely replacement. */
  target_default: string | null;
}

/** A dataset's catalog left as exported because the target database's catalogs are not known (its read failed): the caller reports it. */
export interface UndecidedCatalog {
  file: string;
  dataset: string;
  catalog: string;
  target_database: string;
  target_id: number;
}

/**
 * The default catalog of a connection, from its SQLAlchemy URI as Superset's engine specs derive
 * it (PostgreSQL: the URI's database). Undefined when it cannot be told here (another engine, an
 * unreadable URI): the dataset's catalog is then left as it is.
 */
export function defaultCatalogOfUri(uri: unknown): string | null | undefined {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  const scheme = url.protocol.replace(/:$/, '').split('+')[0]!.toLowerCase();
  if (scheme !== 'postgresql' && scheme !== 'postgres') return undefined;
  const db = decodeURIComponent(url.pathname.replace(/^\//, ''));
  return db || null;
}

/**
 * The one decider: what a dataset's catalog becomes on the target database. The source's default
 * catalog becomes the target's default; another catalog (a multi-catalog database) stays only when
 * the target lists it. `unresolved` means the target has no such catalog: the caller reports it.
 */
export function remapCatalog(
  catalog: unknown,
  sourceDefault: string | null | undefined,
  target: TargetCatalogs | undefined,
): { catalog: string | null; changed: boolean } | { unresolved: true } | null {
  if (typeof catalog !== 'string' || !catalog || !target || sourceDefault === undefined) return null;
  if (catalog === sourceDefault) {
    return target.default === catalog ? { catalog, changed: false } : { catalog: target.default, changed: true };
  }
  if (catalog === target.default || target.names?.includes(catalog)) return { catalog, changed: false };
  return { unresolved: true };
}
