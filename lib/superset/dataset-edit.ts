/**
 * Editing a Superset dataset without losing anything a person curated. Superset's dataset update
 * replaces the column and metric lists with the ones it is sent, so an update is built from the
 * dataset as just read: every column and metric with its id and all its keys, and only the
 * intended fields changed. After the write the dataset is read again and compared field by field
 * with what it was, which proves that nothing but the intended fields moved.
 */
import { createHash } from 'node:crypto';
import type { EditableField, FieldChange, FieldEdit, FieldRef } from '../dataset-fields.ts';
import type { DatasetColumn, DatasetDetail, DatasetUpdate } from './types.ts';

export type { EditableField, FieldChange, FieldEdit, FieldRef };

/** Keys Superset derives or stamps itself: they move on any write and say nothing about content. */
const STAMPS = new Set([
  'changed_on',
  'changed_on_humanized',
  'changed_on_delta_humanized',
  'changed_on_utc',
  'changed_by',
  'changed_by_name',
  'created_on',
  'created_on_humanized',
  'created_on_delta_humanized',
  'created_by',
]);

/** Read-only views Superset computes from the columns (labels, ordering choices, SELECT *). */
const DERIVED = new Set(['verbose_map', 'column_formats', 'order_by_choices', 'select_star', 'granularity_sqla', 'time_grain_sqla']);

/** Keys of a column or metric in Superset's answer that its update refuses; more are learned from its 422 (see the client). */
const NOT_SENT_IN_ITEMS = new Set([...STAMPS, 'type_generic']);

/** A value as compared: absent, null and empty text are all "no value". */
function norm(v: unknown): unknown {
  return v === undefined || v === '' ? null : v;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(norm(a)) === canonical(norm(b));
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function content(d: DatasetDetail): unknown {
  const top = Object.fromEntries(
    Object.entries(d).filter(([k]) => !STAMPS.has(k) && !DERIVED.has(k) && k !== 'columns' && k !== 'metrics'),
  );
  const strip = (o: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(o)
        .filter(([k]) => !STAMPS.has(k))
        .map(([k, v]) => [k, norm(v)]),
    );
  return {
    ...top,
    columns: [...d.columns].sort((a, b) => a.id - b.id).map(strip),
    metrics: [...d.metrics].sort((a, b) => a.id - b.id).map(strip),
  };
}

/**
 * A hash of everything a person could have changed in the dataset (timestamps and derived views
 * left out): equal fingerprints mean nobody changed the dataset in between.
 */
export function datasetFingerprint(d: DatasetDetail): string {
  return createHash('sha256')
    .update(canonical(content(d)))
    .digest('hex');
}

export function findColumn(d: DatasetDetail, name: string): DatasetColumn | undefined {
  return d.columns.find((c) => c.column_name === name);
}

/** The value a field holds now; undefined when the column does not exist. */
export function valueOf(d: DatasetDetail, ref: FieldRef): string | null | undefined {
  if (ref.target === 'dataset') return (norm(d[ref.field]) as string | null) ?? null;
  const col = ref.column_name === null ? undefined : findColumn(d, ref.column_name);
  if (!col) return undefined;
  return (norm(col[ref.field]) as string | null) ?? null;
}

export function describeRef(ref: FieldRef): string {
  return ref.target === 'dataset' ? `dataset ${ref.field}` : `column '${ref.column_name}' ${ref.field}`;
}

/** The edits that would change something, with the values they replace. Throws for a column the dataset lacks. */
export function plannedChanges(d: DatasetDetail, edits: readonly FieldEdit[]): FieldChange[] {
  const out: FieldChange[] = [];
  for (const e of edits) {
    const before = valueOf(d, e);
    if (before === undefined) throw new DatasetEditError(`dataset ${d.id} has no column '${e.column_name}'`);
    if (sameValue(before, e.value)) continue;
    const column_id = e.target === 'column' ? (findColumn(d, e.column_name!)?.id ?? null) : null;
    out.push({
      target: e.target,
      column_name: e.target === 'column' ? e.column_name : null,
      field: e.field,
      column_id,
      before,
      after: e.value,
    });
  }
  return out;
}

/** The update body: every column and metric as read (ids included), with only the changed fields set anew. */
export function buildUpdate(d: DatasetDetail, changes: readonly FieldChange[]): DatasetUpdate {
  const item = <T extends Record<string, unknown>>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => !NOT_SENT_IN_ITEMS.has(k))) as T;
  const body: DatasetUpdate = {
    columns: d.columns.map((c) => {
      const out = item(c);
      for (const ch of changes) if (ch.target === 'column' && ch.column_name === c.column_name) out[ch.field] = ch.after;
      return out;
    }),
    metrics: d.metrics.map((m) => item(m)),
  };
  for (const ch of changes) if (ch.target === 'dataset') body[ch.field] = ch.after;
  return body;
}

/**
 * What differs between the dataset before and after a write, other than the intended changes,
 * and any intended change that did not land: empty when the write did exactly what it should.
 */
export function unexpectedDifferences(before: DatasetDetail, after: DatasetDetail, changes: readonly FieldChange[]): string[] {
  const out: string[] = [];
  const intended = (target: 'dataset' | 'column', column: string | null, field: string) =>
    changes.some((c) => c.target === target && c.field === field && (target === 'dataset' || c.column_name === column));
  const show = (v: unknown) => (v === null || v === undefined ? 'null' : JSON.stringify(v).slice(0, 120));

  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (STAMPS.has(key) || DERIVED.has(key) || key === 'columns' || key === 'metrics') continue;
    if (intended('dataset', null, key)) continue;
    if (!sameValue(before[key], after[key])) out.push(`dataset ${key}: ${show(before[key])} → ${show(after[key])}`);
  }
  const compareItems = (kind: 'column' | 'metric', a: Array<Record<string, unknown>>, b: Array<Record<string, unknown>>) => {
    const nameKey = kind === 'column' ? 'column_name' : 'metric_name';
    const byId = new Map(b.map((x) => [x.id, x]));
    for (const x of a) {
      const y = byId.get(x.id);
      if (!y) {
        out.push(`${kind} '${String(x[nameKey])}' (id ${String(x.id)}) is gone`);
        continue;
      }
      for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
        if (STAMPS.has(key)) continue;
        if (kind === 'column' && intended('column', String(x[nameKey]), key)) continue;
        if (!sameValue(x[key], y[key])) out.push(`${kind} '${String(x[nameKey])}' ${key}: ${show(x[key])} → ${show(y[key])}`);
      }
    }
    const known = new Set(a.map((x) => x.id));
    for (const y of b) if (!known.has(y.id)) out.push(`${kind} '${String(y[nameKey])}' (id ${String(y.id)}) appeared`);
  };
  compareItems('column', before.columns, after.columns);
  compareItems('metric', before.metrics, after.metrics);

  for (const c of changes) {
    const now = valueOf(after, c);
    if (!sameValue(now, c.after)) out.push(`${describeRef(c)} did not take the new value: ${show(c.after)}, it holds ${show(now)}`);
  }
  return out;
}

/** An edit that cannot apply to the dataset as it is (a column it does not have). */
export class DatasetEditError extends Error {
  override name = 'DatasetEditError';
}
