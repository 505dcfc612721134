/**
 * A column dictionary: labels (`verbose_name`) and descriptions per column name, read from an
 * uploaded workbook or from the rows of a SQL Lab query, and how it matches a dataset's columns.
 */
import { ValidationError, type FieldError } from '../errors.ts';

export interface DictionaryEntry {
  column_name: string;
  verbose_name: string | null;
  description: string | null;
  /** When set, the entry applies only to datasets on this table. */
  table_name: string | null;
}

/** Superset keeps a column label in 1024 characters; descriptions are text, kept within reason. */
export const MAX_VERBOSE_NAME = 1024;
export const MAX_DESCRIPTION = 10_000;
export const MAX_ENTRIES = 20_000;

/** Header names (trimmed, case-insensitive, spaces and dashes as underscores) and what they mean. */
const HEADERS: Record<string, keyof DictionaryEntry> = {
  column_name: 'column_name',
  column: 'column_name',
  verbose_name: 'verbose_name',
  label: 'verbose_name',
  description: 'description',
  table_name: 'table_name',
  table: 'table_name',
};

export function headerKey(raw: unknown): keyof DictionaryEntry | undefined {
  const k = String(raw ?? '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return HEADERS[k];
}

const key = (s: string) => s.trim().toLowerCase();

function text(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const s = (typeof v === 'string' ? v : String(v)).trim();
  return s ? s : null;
}

/**
 * Entries from raw records (keys as the source named them), checked: a column name on every
 * entry with a value, lengths within Superset's limits, no column named twice for one table.
 * `where` names a record for messages ("row 7", "query row 3").
 */
export function normaliseEntries(
  records: Array<Record<string, unknown>>,
  where: (i: number) => string,
): { entries: DictionaryEntry[]; problems: FieldError[] } {
  const entries: DictionaryEntry[] = [];
  const problems: FieldError[] = [];
  const seen = new Map<string, number>();
  records.forEach((r, i) => {
    const e: DictionaryEntry = { column_name: '', verbose_name: null, description: null, table_name: null };
    for (const [k, v] of Object.entries(r)) {
      const field = headerKey(k);
      if (field) e[field] = text(v) as never;
    }
    if (!e.column_name && !e.verbose_name && !e.description) return; // a blank row
    if (!e.column_name) {
      problems.push({ field: where(i), message: 'has a label or description but no column_name' });
      return;
    }
    if (e.verbose_name && e.verbose_name.length > MAX_VERBOSE_NAME)
      problems.push({ field: where(i), message: `verbose_name is longer than ${MAX_VERBOSE_NAME} characters` });
    if (e.description && e.description.length > MAX_DESCRIPTION)
      problems.push({ field: where(i), message: `description is longer than ${MAX_DESCRIPTION} characters` });
    const id = `${key(e.table_name ?? '')}\u0000${key(e.column_name)}`;
    const first = seen.get(id);
    if (first !== undefined) {
      problems.push({
        field: where(i),
        message: `column '${e.column_name}'${e.table_name ? ` of table '${e.table_name}'` : ''} is already described in ${where(first)}`,
      });
      return;
    }
    seen.set(id, i);
    entries.push(e);
  });
  if (entries.length > MAX_ENTRIES) problems.push({ field: 'dictionary', message: `more than ${MAX_ENTRIES} entries` });
  return { entries, problems };
}

/** Throws a 400 naming the first problems, when there are any. */
export function assertNoProblems(problems: FieldError[], what: string): void {
  if (!problems.length) return;
  const shown = problems.slice(0, 20);
  throw new ValidationError(
    `${what}: ${shown.map((p) => `${p.field} ${p.message}`).join('; ')}${problems.length > shown.length ? ` (and ${problems.length - shown.length} more)` : ''}`,
    shown,
  );
}

export interface ColumnMatch {
  /** The dataset's own spelling of the column name. */
  column_name: string;
  entry: DictionaryEntry;
}

export interface DictionaryMatch {
  matches: ColumnMatch[];
  /** Dictionary entries (for this table, or for any table) naming no column of the dataset. */
  unmatched_dictionary: string[];
  /** Dataset columns no entry names. */
  unmatched_dataset: string[];
}

/**
 * Matches entries to a dataset's columns by name, trimmed and case-insensitive. An entry for the
 * dataset's table wins over one for any table.
 */
export function matchDictionary(
  entries: readonly DictionaryEntry[],
  dataset: { table_name: string; columns: ReadonlyArray<{ column_name: string }> },
): DictionaryMatch {
  const table = key(dataset.table_name);
  const applicable = new Map<string, DictionaryEntry>();
  for (const e of entries) {
    if (e.table_name !== null && key(e.table_name) !== table) continue;
    const k = key(e.column_name);
    const held = applicable.get(k);
    if (!held || (held.table_name === null && e.table_name !== null)) applicable.set(k, e);
  }
  const matches: ColumnMatch[] = [];
  const used = new Set<string>();
  const unmatchedDataset: string[] = [];
  for (const c of dataset.columns) {
    const e = applicable.get(key(c.column_name));
    if (e) {
      matches.push({ column_name: c.column_name, entry: e });
      used.add(key(c.column_name));
    } else {
      unmatchedDataset.push(c.column_name);
    }
  }
  const unmatchedDictionary = [...applicable.entries()].filter(([k]) => !used.has(k)).map(([, e]) => e.column_name);
  return { matches, unmatched_dictionary: unmatchedDictionary, unmatched_dataset: unmatchedDataset };
}
