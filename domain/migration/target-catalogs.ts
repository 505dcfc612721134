import type { Bundle } from '../../lib/bundles/bundle.ts';
import { defaultCatalogOfUri, type TargetCatalogs } from '../../lib/bundles/catalogs.ts';
import { UpstreamUnavailableError } from '../../lib/errors.ts';
import { SupersetForbiddenError } from '../../lib/superset/errors.ts';
import type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/**
 * A read of a target database's catalogs that Superset refused: `connection` (its default, from
 * the connection's URI: Superset serves it only with can_write on Database) or `catalogs` (the
 * list, with can_read on Database). Its datasets' catalogs are then reported as not checked.
 */
export interface CatalogReadRefusal {
  read: 'connection' | 'catalogs';
  forbidden: boolean;
  message: string;
}

/**
 * The target databases' catalogs a task has read (one read per database per task: it lives in the
 * task's TargetIndex), so that remapping a bundle's datasets (lib/bundles/catalogs.ts) stays a
 * pure, synchronous step for the full plan and a rerun's shortcut alike.
 */
export class TargetCatalogReads {
  private readonly upstream: MigrationUpstream;
  private readonly read = new Map<number, Promise<TargetCatalogs | undefined>>();
  private readonly done = new Map<number, TargetCatalogs | undefined>();
  private readonly refusals = new Map<number, CatalogReadRefusal>();

  constructor(upstream: MigrationUpstream) {
    this.upstream = upstream;
  }

  /** What was read of a target database's catalogs; undefined when unknown (its datasets' catalogs stay as exported). */
  known(targetId: number): TargetCatalogs | undefined {
    return this.done.get(targetId);
  }

  /** Why the last read of a target database's catalogs (or of their list) was refused; undefined when it was not. */
  refusal(targetId: number): CatalogReadRefusal | undefined {
    return this.refusals.get(targetId);
  }

  /**
   * Reads the catalogs of the target databases this bundle's databases are mapped to: the default
   * of each, and the list only where a dataset names a catalog other than its source's default.
   */
  async readFor(bundle: Bundle, sourceDbs: readonly UpstreamDatabase[], mappings: ReadonlyMap<number, number>): Promise<void> {
    const reads: Array<Promise<void>> = [];
    for (const f of bundle.of('databases')) {
      const src = sourceDbs.find((d) => d.uuid === f.content.uuid) ?? sourceDbs.find((d) => d.database_name === f.content.database_name);
      const targetId = src ? mappings.get(src.id) : undefined;
      const sourceDefault = defaultCatalogOfUri(f.content.sqlalchemy_uri);
      if (targetId === undefined || sourceDefault === undefined) continue;
      const names = bundle
        .of('datasets')
        .some(
          (d) => d.content.database_uuid === f.content.uuid && typeof d.content.catalog === 'string' && d.content.catalog !== sourceDefault,
        );
      reads.push(this.readOne(targetId, names));
    }
    await Promise.all(reads);
  }

  private async readOne(targetId: number, names: boolean): Promise<void> {
    const had = this.done.get(targetId);
    if (this.done.has(targetId) && (!names || !had || had.names)) return;
    let pending = this.read.get(targetId);
    if (!pending || names) {
      pending = this.ask(targetId, names);
      this.read.set(targetId, pending);
      // An outage is the plan's failure (retried), never a read to keep for the task.
      const mine = pending;
      // expected: only forgotten here; the plan awaiting `pending` meets the error.
      mine.catch(() => this.read.get(targetId) === mine && this.read.delete(targetId));
    }
    this.done.set(targetId, await pending);
  }

  /**
   * A read the target refuses (a service account without write on databases, a database it no
   * longer has) leaves it unknown, the refusal kept for the report; an outage is thrown, so the
   * plan is retried rather than importing a catalog nobody checked.
   */
  private async ask(targetId: number, names: boolean): Promise<TargetCatalogs | undefined> {
    const upstream = this.upstream;
    if (!upstream.databaseCatalogs) return undefined;
    const attempt = (withNames: boolean) => upstream.databaseCatalogs!(targetId, withNames);
    this.refusals.delete(targetId);
    if (names) {
      try {
        return await attempt(true);
      } catch (err) {
        this.refused(targetId, 'catalogs', err);
      }
    }
    try {
      // Without the list, a dataset's other catalog is reported as not checked, never guessed.
      return await attempt(false);
    } catch (err) {
      this.refused(targetId, 'connection', err);
      return undefined;
    }
  }

  private refused(targetId: number, read: CatalogReadRefusal['read'], err: unknown): void {
    if (err instanceof UpstreamUnavailableError) throw err;
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 300);
    this.refusals.set(targetId, { read, forbidden: err instanceof SupersetForbiddenError, message });
  }
}
