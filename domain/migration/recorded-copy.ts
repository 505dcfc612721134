import type { EnvRule } from '../../contracts/env-rules.ts';
import type { Bundle, BundleFile } from '../../lib/bundles/bundle.ts';
import { applyEnvRules } from '../../lib/bundles/env-rules.ts';
import { idOfNamedFile } from '../../lib/bundles/split.ts';
import type { RlsRule } from '../../lib/superset/types.ts';
import { planObjects, preparedOf, remapOnto, type PreparedBundle } from './plan.ts';
import type { TargetCatalogReads } from './target-catalogs.ts';
import type { UpstreamDatabase } from './upstream.ts';

/**
 * A rerun's shortcut. A dashboard an earlier migration brought into this target is unchanged
 * when its source export, planned onto the target, hashes as that migration's plan did and the
 * target's own export of the copy hashes as it did right after that import. Both exports are one
 * call each for a whole batch; telling it this way needs none of the target's lists (its index),
 * which are most of what planning against the target costs.
 *
 * The plan made here is the full plan's (same databases, objects, differences) wherever it can
 * give an answer, and it gives one only where nothing outside the copy can change that answer:
 * - the last plan had no collision: a slug or table taken over by another object rewrites the
 *   bundle, so its hash would differ from this plan's;
 * - the copy holds the dashboard's slug and every one of its charts and datasets by uuid, and
 *   Superset keeps slugs and (database, schema, table) unique, so no other object holds them now;
 * - each object's id in the target is read from the copy's file names, where Superset names them
 *   `<name>_<id>.yaml`; a release naming them otherwise gets no answer here.
 * Null means "ask the full plan", never "changed".
 */
export function planOnRecordedCopy(opts: {
  /** The source's export of the dashboard (rewritten here: pass a copy). */
  bundle: Bundle;
  /** The target's export of the copy an earlier migration recorded, and its id. */
  copy: Bundle;
  copyId: number;
  sourceDbs: readonly UpstreamDatabase[];
  targetDbs: readonly UpstreamDatabase[];
  mappings: Map<number, number>;
  /** The pair's per-environment rules, applied as the full plan applies them. */
  envRules?: readonly EnvRule[];
  /** The target databases' catalogs, read for this bundle as the full plan reads them. */
  catalogs?: Pick<TargetCatalogReads, 'known'> & Partial<Pick<TargetCatalogReads, 'refusal'>>;
  request: { sourceEnvId: string; targetEnvId: string; dashboardId: number };
}): PreparedBundle | null {
  const { prepared, dashboardFile, datasetFiles } = preparedOf(opts.bundle, opts.request.dashboardId);
  const { sourceDbs, targetDbs, mappings, catalogs, envRules, request } = opts;
  remapOnto(prepared, { sourceDbs, targetDbs, mappings, request, catalogs, envRules });
  if (prepared.blocked) return null; // the full plan reports it, with its next actions
  prepared.envRules = applyEnvRules(prepared.bundle, opts.envRules ?? []);

  const copyByUuid = new Map<string, BundleFile>();
  for (const f of opts.copy.files.values()) if (typeof f.content.uuid === 'string') copyByUuid.set(f.content.uuid, f);
  const there = copyByUuid.get(prepared.dashboardUuid);
  if (there?.kind !== 'dashboards' || slugOf(there) !== slugOf(dashboardFile)) return null;

  const candidates = [...prepared.bundle.files.values()].filter(
    (f) => f.kind === 'dashboards' || f.kind === 'charts' || f.kind === 'datasets',
  );
  const found: Array<{ targetId: number; targetObject: Record<string, unknown> }> = [];
  for (const f of candidates) {
    const mine = copyByUuid.get(String(f.content.uuid));
    if (!mine || mine.kind !== f.kind) return null;
    const id = f.kind === 'dashboards' ? opts.copyId : idOfNamedFile(mine.path, nameOf(mine));
    if (id === null) return null;
    found.push({ targetId: id, targetObject: mine.content });
  }
  prepared.targetDashboardId = opts.copyId;
  prepared.targetHash = opts.copy.contentHash();
  prepared.datasets = datasetFiles.map(({ file, ...d }) => ({ ...d, targetUuid: String(file.content.uuid) }));
  planObjects(prepared, candidates, found, new Set(), true);
  return prepared;
}

/**
 * Whether a row-level-security rule of either environment may touch one of these tables. Rules
 * name their tables, so "no rule names any of them" means the comparison finds nothing on either
 * side; otherwise the full comparison (which needs the datasets' ids) decides.
 */
export function rulesMayTouch(rules: readonly RlsRule[], tableNames: readonly string[]): boolean {
  const names = new Set(tableNames);
  return rules.some((r) => r.tables.some((t) => names.has(t.table_name)));
}

function slugOf(f: BundleFile): string | null {
  return typeof f.content.slug === 'string' && f.content.slug ? f.content.slug : null;
}

/** The name Superset builds an exported file's name from. */
function nameOf(f: BundleFile): string {
  const key = f.kind === 'charts' ? 'slice_name' : f.kind === 'datasets' ? 'table_name' : 'dashboard_title';
  return String(f.content[key] ?? '');
}
