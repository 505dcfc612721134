/**
 * A drift report's dashboard read from its dry-run migration: the objects the migration would
 * create or update, and the companions (contracts/companions.ts) that differ, each named with
 * what differs and what brings it in line. A companion kind an environment does not offer is
 * named as not compared, never as drift nor as in sync. Pure: the workflow sandbox imports it.
 */
import { isCompanionDifference, type CompanionItem, type CompanionKindName, type CompanionKindReport } from '../contracts/companions.ts';
import { migrateAgainAction, type DashboardOutcome } from '../contracts/migration.ts';
import { uniqueActions, type NextAction } from '../contracts/outcomes.ts';
import type { CompanionDrift, CompanionKindNotCompared, DriftItem, DriftObject, DriftReportInput } from '../contracts/schedules.ts';

export function failedDrift(id: number): DriftItem {
  return {
    kind: 'dashboard',
    id,
    title: null,
    status: 'failed',
    outcome: 'failed',
    dashboard_uuid: null,
    target_dashboard_id: null,
    differences: [],
    next_actions: [],
  };
}

/** A dry run's plan read as drift: every object the migration would create or update differs, and every companion that differs. */
export function driftOf(o: DashboardOutcome, input: DriftReportInput): DriftItem {
  if (o.status !== 'planned') {
    return {
      ...failedDrift(o.id),
      title: o.title,
      dashboard_uuid: o.dashboard_uuid,
      error: o.error ?? `the dry run ended ${o.status}`,
      step: o.step ?? 'plan',
      ...(o.upstream_error ? { upstream_error: o.upstream_error } : {}),
      next_actions: o.next_actions,
    };
  }
  const differences: DriftObject[] = o.objects
    .filter((x) => x.action === 'create' || x.action === 'update')
    .map((x) => ({ kind: x.kind, name: x.name, uuid: x.uuid, action: x.action as 'create' | 'update', differences: x.differences ?? [] }));
  const reports = o.companions ?? [];
  const companions = companionDrift(reports, migrateAgain(o, input, driftedKinds(reports)));
  return {
    kind: 'dashboard',
    id: o.id,
    title: o.title,
    status: differences.length || companions.length ? 'drifted' : 'in_sync',
    outcome: 'succeeded',
    dashboard_uuid: o.dashboard_uuid,
    target_dashboard_id: o.objects.find((x) => x.kind === 'dashboard')?.target_id ?? null,
    differences,
    companions,
    companions_not_compared: notCompared(reports),
    ...(o.warnings?.length ? { warnings: o.warnings } : {}),
    next_actions: uniqueActions([
      ...companions.map((c) => c.next_action),
      ...(o.warnings ?? []).flatMap((w) => w.next_actions),
      ...o.next_actions,
    ]),
  };
}

/** The kinds a migration would write to bring the dashboard in line: those with a companion to create or update. */
export function driftedKinds(reports: readonly CompanionKindReport[]): CompanionKindName[] {
  return reports.filter((r) => r.available && r.items.some((i) => i.action === 'create' || i.action === 'update')).map((r) => r.kind);
}

/** Migrating the dashboard again with these kinds copied (roles are strict by default: copying them is asked for by name). */
function migrateAgain(o: DashboardOutcome, input: DriftReportInput, kinds: CompanionKindName[]): NextAction {
  return migrateAgainAction(
    'migrate_again',
    `Migrate '${o.title ?? o.id}' again (source wins): it copies the source's ${kinds.join(', ')} to the target, never deleting what only the target has`,
    { ...input, companions: Object.fromEntries(kinds.map((k) => [k, 'copy'])) },
    [o.id],
    true,
  );
}

/** Each companion of an offered kind that differs, in the outcome's order. */
export function companionDrift(reports: readonly CompanionKindReport[], again: NextAction): CompanionDrift[] {
  return reports
    .filter((r) => r.available)
    .flatMap((r) =>
      r.items.filter(isCompanionDifference).map((i): CompanionDrift => ({
        kind: r.kind,
        name: i.name,
        ...(i.on ? { on: i.on } : {}),
        action: i.action as CompanionDrift['action'],
        ...(i.fields?.length ? { fields: i.fields } : {}),
        difference: differenceOf(i),
        next_action: i.action === 'missing' ? (i.next_action ?? fixInSuperset(r.kind, i)) : again,
      })),
    );
}

function differenceOf(i: CompanionItem): string {
  if (i.action === 'update') return `differs in the target: ${(i.fields ?? []).join(', ') || 'its content'}`;
  if (i.action === 'create') return `in the source, not in the target${i.note ? ` (${i.note})` : ''}`;
  return `cannot be carried: ${i.note ?? 'the target lacks what it names'}`;
}

function fixInSuperset(kind: CompanionKindName, i: CompanionItem): NextAction {
  return {
    action: 'fix_companions_in_superset',
    description: `Make ${kind} '${i.name}'${i.on ? ` on ${i.on}` : ''} the same in both Superset instances`,
  };
}

/** Kinds an environment does not offer or would not show: named with the reason and what the source has of them. */
export function notCompared(reports: readonly CompanionKindReport[]): CompanionKindNotCompared[] {
  return reports
    .filter((r) => !r.available)
    .map((r) => ({
      kind: r.kind,
      reason: r.unavailable ?? 'not offered by an environment',
      dropped: r.items.map((i) => ({
        name: i.name,
        ...(i.note ? { note: i.note } : {}),
        ...(i.next_action ? { next_action: i.next_action } : {}),
      })),
    }));
}
