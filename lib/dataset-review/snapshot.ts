/**
 * The execution snapshot a preview runs: the filter context (WHERE clauses Superset adds and
 * `filter_values`/`get_filters` read) and the template params (`url_param`, plain variables).
 *  - An imported filter with a value enters the filter context, mapped or not.
 *  - A mapped variable is filled with its filter's effective value (a manual value wins) and the
 *    filter's effective clauses join the filter context.
 *  - A filter with neither a raw nor a normalised value (and no manual value) adds nothing.
 *  - A filter on a column the dataset lacks cannot be a WHERE clause; it only fills its variable.
 */
import type { FilterClause, ImportedFilter } from './filters.ts';
import type { VariableKind } from './jinja.ts';

export interface MappingLike {
  filter_id: string;
  variable: string | null;
  variable_kind: VariableKind | null;
  value: unknown;
}

export interface ExecutionSnapshot {
  filters: FilterClause[];
  template_params: Record<string, unknown>;
  /** Why each filter did or did not take part. */
  trace: Array<{ filter_id: string; active: boolean; reason: string; variable: string | null }>;
}

const present = (v: unknown) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0) && v !== '';

function effectiveClauses(f: ImportedFilter, manual: unknown): FilterClause[] {
  if (present(manual) && f.column) return [{ col: f.column, op: Array.isArray(manual) ? 'IN' : '==', val: manual }];
  if (f.normalized?.length) return f.normalized;
  if (present(f.raw_value) && f.column) return [{ col: f.column, op: Array.isArray(f.raw_value) ? 'IN' : '==', val: f.raw_value }];
  return [];
}

function effectiveValue(f: ImportedFilter, manual: unknown): unknown {
  if (present(manual)) return manual;
  if (present(f.raw_value)) return f.raw_value;
  const first = f.normalized?.[0];
  return first ? first.val : null;
}

/** A variable's value as a template sees it: one value as itself, a one-element list as its element. */
function templateValue(v: unknown): unknown {
  return Array.isArray(v) && v.length === 1 ? v[0] : v;
}

export function buildSnapshot(filters: ImportedFilter[], mappings: MappingLike[]): ExecutionSnapshot {
  const byFilter = new Map(mappings.map((m) => [m.filter_id, m]));
  const out: ExecutionSnapshot = { filters: [], template_params: {}, trace: [] };
  for (const f of filters) {
    const m = byFilter.get(f.id);
    const clauses = effectiveClauses(f, m?.value);
    const value = effectiveValue(f, m?.value);
    if (!clauses.length && !present(value)) {
      out.trace.push({ filter_id: f.id, active: false, reason: 'no value', variable: m?.variable ?? null });
      continue;
    }
    if (m?.variable && (m.variable_kind === 'url_param' || m.variable_kind === 'plain'))
      out.template_params[m.variable] = templateValue(value);
    if (f.column_in_dataset === false) {
      out.trace.push({
        filter_id: f.id,
        active: !!m?.variable,
        reason: m?.variable
          ? `fills ${m.variable}; column '${f.column}' is not in the dataset, so no WHERE clause`
          : `column '${f.column}' is not in the dataset`,
        variable: m?.variable ?? null,
      });
      continue;
    }
    out.filters.push(...clauses);
    out.trace.push({
      filter_id: f.id,
      active: true,
      reason: m?.variable ? `filter context and ${m.variable}` : 'filter context (unmapped)',
      variable: m?.variable ?? null,
    });
  }
  return out;
}

/** Mappings proposed at intake: a variable reading the filter's column, or named like the filter. */
export function proposeMappings(
  filters: ImportedFilter[],
  variables: Array<{ name: string; kind: VariableKind }>,
): Array<{ filter_id: string; variable: string | null; variable_kind: VariableKind | null }> {
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  return filters.map((f) => {
    const col = f.column ? norm(f.column) : null;
    const name = norm(f.name);
    const hit =
      variables.find((v) => (v.kind === 'filter_values' || v.kind === 'get_filters') && col !== null && norm(v.name) === col) ??
      variables.find((v) => (v.kind === 'url_param' || v.kind === 'plain') && (norm(v.name) === col || norm(v.name) === name));
    return { filter_id: f.id, variable: hit?.name ?? null, variable_kind: hit?.kind ?? null };
  });
}
