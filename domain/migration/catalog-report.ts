/**
 * What a plan says about its datasets' catalogs (lib/bundles/catalogs.ts): each one that followed
 * its database, each the target database does not list (with the catalog rule to add), and each
 * the plan could not check because the target refused to show the database's catalogs. The last
 * goes on as exported, named as a warning with the step and what to do: a check never passes
 * for what it has not seen.
 */
import type { EnvRule } from '../../contracts/env-rules.ts';
import type { ObjectPlan, OutcomeWarning } from '../../contracts/migration.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { CatalogChange, UndecidedCatalog, UnresolvedCatalog } from '../../lib/bundles/catalogs.ts';
import type { CatalogReadRefusal, TargetCatalogReads } from './target-catalogs.ts';

/** What of a plan (./plan.ts PreparedBundle) the report writes to. */
interface PlanReport {
  bundle: Bundle;
  objects: ObjectPlan[];
  collisions: Array<{ kind: string; detail: string; resolution: string }>;
  nextActions?: NextAction[];
  warnings?: OutcomeWarning[];
}

type Request = { sourceEnvId: string; targetEnvId: string };

/** One target database's datasets whose catalog was not checked, and why. */
interface NotChecked {
  refusal: CatalogReadRefusal;
  database: string;
  datasets: Array<{ dataset: string; catalog: string }>;
}

export function reportCatalogs(
  prepared: PlanReport,
  found: { changes: CatalogChange[]; unresolved: UnresolvedCatalog[]; undecided: UndecidedCatalog[] },
  opts: { request: Request; envRules?: readonly EnvRule[]; catalogs?: Partial<Pick<TargetCatalogReads, 'refusal'>> },
): void {
  for (const c of found.changes) {
    const db = prepared.objects.find(
      (o) => o.kind === 'database' && o.file && prepared.bundle.files.get(c.file)?.content.database_uuid === o.uuid,
    );
    if (db) db.note = `${db.note}; ${c.dataset}: catalog '${c.from}' becomes '${c.to}', the target database's own`;
  }
  // A catalog a `catalog` rule renames is decided by the rule (applied after): nothing to report.
  const renamed = new Set((opts.envRules ?? []).filter((r) => r.kind === 'catalog').map((r) => r.from));
  const refusalOf = (id: number) => opts.catalogs?.refusal?.(id);
  const notChecked = new Map<number, NotChecked>();
  const note = (id: number, refusal: CatalogReadRefusal, database: string, dataset: string, catalog: string) => {
    const entry = notChecked.get(id) ?? { refusal, database, datasets: [] };
    entry.datasets.push({ dataset, catalog });
    notChecked.set(id, entry);
  };
  for (const u of found.unresolved) {
    if (renamed.has(u.catalog)) continue;
    const refusal = refusalOf(u.target_id);
    // Not listed because the list was refused: not checked, rather than missing.
    if (refusal?.read === 'catalogs') note(u.target_id, refusal, u.target_database, u.dataset, u.catalog);
    else reportUnlisted(prepared, u, opts.request);
  }
  for (const u of found.undecided) {
    const refusal = refusalOf(u.target_id);
    if (refusal && !renamed.has(u.catalog)) note(u.target_id, refusal, u.target_database, u.dataset, u.catalog);
  }
  for (const n of notChecked.values()) {
    const warning = notCheckedWarning(n, opts.request);
    (prepared.warnings ??= []).push(warning);
    (prepared.nextActions ??= []).push(...warning.next_actions);
  }
}

function reportUnlisted(prepared: PlanReport, u: UnresolvedCatalog, request: Request): void {
  prepared.collisions.push({
    kind: 'catalog',
    detail: `${u.dataset} reads catalog '${u.catalog}', which target database '${u.target_database}' does not list`,
    resolution: 'imported naming that catalog, as exported: its charts fail (or read another database) until a catalog rule renames it',
  });
  (prepared.nextActions ??= []).push(catalogRule(request, u.catalog, u.target_default ?? '<target catalog>', `for ${u.dataset}`));
}

function catalogRule(request: Request, from: string, to: string, what: string): NextAction {
  return {
    action: 'add_catalog_rule',
    description: `Add a catalog rule from '${from}' to the target's catalog ${what}, then migrate again`,
    request: {
      method: 'POST',
      path: `/api/environments/${request.sourceEnvId}/rules/${request.targetEnvId}`,
      body: { kind: 'catalog', from, to },
    },
  };
}

function notCheckedWarning(n: NotChecked, request: Request): OutcomeWarning {
  const { refusal, database } = n;
  const datasets = n.datasets.map((d) => `${d.dataset} (catalog '${d.catalog}')`).join(', ');
  const what =
    refusal.read === 'connection'
      ? `show target database '${database}''s connection, where its default catalog is read`
      : `list target database '${database}''s catalogs`;
  const grant: NextAction =
    refusal.read === 'connection'
      ? {
          action: 'grant_database_write',
          description: `Give the target's service account can_write on Database in the target Superset (every release 4.1-6.1 serves a database's /connection only with it), then migrate again`,
        }
      : {
          action: 'grant_database_read',
          description: `Give the target's service account can_read on Database in the target Superset (it lists a database's catalogs), then migrate again`,
        };
  const check: NextAction = {
    action: 'check_target_database',
    description: `Check that target database '${database}' exists and the service account may see it, then migrate again`,
  };
  return {
    step: 'plan',
    code: 'catalog_not_checked',
    message: `Superset refused to ${what} (${refusal.message}): the catalog of ${datasets} was not checked against it and goes as exported, which may name the source's database`,
    next_actions: [
      refusal.forbidden ? grant : check,
      ...[...new Set(n.datasets.map((d) => d.catalog))].map((c) =>
        catalogRule(request, c, '<target catalog>', `of '${database}' yourself`),
      ),
    ],
  };
}
