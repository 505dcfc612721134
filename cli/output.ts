import Table from 'cli-table3';
import { stringify as toYaml } from 'yaml';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

type Row = Record<string, unknown>;

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Rows as aligned columns (the given ones, else every key of the first row). */
export function table(rows: Row[], columns?: string[]): string {
  if (!rows.length) return '(none)';
  const cols = columns ?? Object.keys(rows[0]!);
  const cells = rows.map((r) => cols.map((c) => cell(c.split('.').reduce<unknown>((o, k) => (o as Row | undefined)?.[k], r)).slice(0, 80)));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(cols.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}

const isRow = (v: unknown): v is Row => !!v && typeof v === 'object' && !Array.isArray(v);
const scalar = (v: unknown) => v === null || typeof v !== 'object';

/** A nested object in one cell: its scalar fields as `key=value`, the rest left to JSON and YAML. */
function inline(v: Row): string {
  const parts = Object.entries(v)
    .filter(([, x]) => scalar(x) && x !== null)
    .map(([k, x]) => `${k}=${String(x)}`);
  return parts.join(', ').slice(0, 100);
}

/**
 * One answer for a person: its fields as a two-column table, then each list of records as a
 * table of its own (its scalar columns, the first eight), headed by its name and count.
 */
export function record(data: Row): string {
  const fields = new Table({ style: { head: [], border: [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } });
  const lists: string[] = [];
  for (const [k, v] of Object.entries(data)) {
    if (Array.isArray(v) && v.length && v.every(isRow)) {
      const cols = Object.keys(v[0]!)
        .filter((c) => v.every((r) => scalar(r[c])))
        .slice(0, 8);
      lists.push(`${k.toUpperCase()} (${v.length})\n${table(v, cols)}`);
    } else {
      const text = isRow(v) ? inline(v) : Array.isArray(v) ? v.map((x) => (isRow(x) ? inline(x) : cell(x))).join(', ') : cell(v);
      fields.push({ [k]: text.length > 120 ? `${text.slice(0, 117)}...` : text });
    }
  }
  return [fields.toString(), ...lists].join('\n\n');
}

/**
 * Writes the command's answer to stdout in the chosen format; `rows` (with their columns) is what
 * a table shows, the whole `data` is what JSON and YAML carry.
 */
export function print(format: OutputFormat, data: unknown, view?: { rows: Row[]; columns?: string[] } | (() => string)): void {
  if (format === 'json') process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else if (format === 'yaml') process.stdout.write(toYaml(data));
  else if (typeof view === 'function') process.stdout.write(`${view()}\n`);
  else if (view) process.stdout.write(`${table(view.rows, view.columns)}\n`);
  else if (Array.isArray(data)) process.stdout.write(`${table(data as Row[])}\n`);
  else if (data && typeof data === 'object') process.stdout.write(`${record(data as Row)}\n`);
  else process.stdout.write(`${cell(data)}\n`);
}

/** Human lines (progress, next actions) go to stderr, so stdout stays parseable. */
export function say(line: string): void {
  process.stderr.write(`${line}\n`);
}
