import type { Bundle } from '../../lib/bundles/bundle.ts';
import { defaultCatalogOfUri, type TargetCatalogs } from '../../lib/bundles/catalogs.ts';
import type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/**
 * The target databases' catalogs a task has read (one read per database per task: it lives in the
 * task's TargetIndex), so that remapping a bundle's datasets (lib/bundles/catalogs.ts) stays a
 * pure, synchronous step for the full plan and a rerun's shortcut alike.
 */
export class TargetCatalogReads {
  private readonly upstream: MigrationUpstream;
  private readonly read = new Map<number, Promise<TargetCatalogs | undefined>>();
  private readonly done = new Map<number, TargetCatalogs | undefined>();

  constructor(upstream: MigrationUpstream) {
    this.upstream = upstream;
  }

  /** What was read of a target database's catalogs; undefined when unknown (its datasets' catalogs stay as exported). */
  known(targetId: number): TargetCatalogs | undefined {
    return this.done.get(targetId);
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
    }
    this.done.set(targetId, await pending);
  }

  /** A read the target refuses (a service account without write on databases, an unreachable database) leaves it unknown. */
  private async ask(targetId: number, names: boolean): Promise<TargetCatalogs | undefined> {
    const upstream = this.upstream;
    if (!upstream.databaseCatalogs) return undefined;
    const attempt = (withNames: boolean) => upstream.databaseCatalogs!(targetId, withNames);
    // Without the list, a dataset's other catalog is reported, never guessed.
    return (names ? attempt(true).catch(() => attempt(false)) : attempt(false)).catch(() => undefined);
  }
}
