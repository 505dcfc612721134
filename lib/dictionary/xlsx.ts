/**
 * Reads a column dictionary from an .xlsx workbook with exceljs: the first row that is not empty
 * names the columns (`column_name`, and `verbose_name` and/or `description`, optionally
 * `table_name`), every row below it is an entry.
 *
 * An .xlsx is a ZIP archive, and a small upload can unpack to gigabytes, whatever its directory
 * declares. exceljs (through JSZip) inflates whatever the archive holds before it checks a size,
 * so it never sees the upload: the one archive decider (lib/archive/unzip.ts) unpacks it first
 * within MAX_UNPACKED_BYTES, counting as it inflates, and exceljs reads the parts it produced,
 * packed again without compression (what exceljs reads is exactly what was counted).
 */
import type ExcelJS from 'exceljs';
import { zipSync } from 'fflate';
import { ArchiveError, unzipWithin } from '../archive/unzip.ts';
import { lazyModule } from '../lazy.ts';
import { ValidationError } from '../errors.ts';
import { assertNoProblems, headerKey, normaliseEntries, type DictionaryEntry } from './entries.ts';

export const MAX_UNPACKED_BYTES = 50 * 1024 * 1024;
const MAX_ARCHIVE_FILES = 500;

/** exceljs (with its zip and stream dependencies) loads when a dictionary file arrives, not at start. */
export const loadExcel = lazyModule(async () => (await import('exceljs')).default);

export interface ParsedWorkbook {
  sheet: string;
  entries: DictionaryEntry[];
}

const FIELD = 'body.file';

/** Parses the workbook or throws a 400 (ValidationError on `body.file`) saying what is wrong with it. */
export async function parseDictionaryWorkbook(bytes: Buffer, opts: { sheet?: string } = {}): Promise<ParsedWorkbook> {
  const checked = unpackWorkbook(bytes);
  const wb = new (await loadExcel()).Workbook();
  try {
    await wb.xlsx.load(checked as unknown as ArrayBuffer);
  } catch (err) {
    throw new ValidationError(`the file is not a readable .xlsx workbook: ${err instanceof Error ? err.message : String(err)}`, [
      { field: FIELD, message: 'not a readable .xlsx workbook' },
    ]);
  }
  const ws = opts.sheet ? wb.getWorksheet(opts.sheet) : wb.worksheets.find((w) => w.actualRowCount > 0);
  if (!ws) {
    throw new ValidationError(opts.sheet ? `the workbook has no sheet named '${opts.sheet}'` : 'the workbook has no sheet with any rows', [
      { field: opts.sheet ? 'body.sheet' : FIELD, message: opts.sheet ? 'no such sheet' : 'empty workbook' },
    ]);
  }
  return { sheet: ws.name, entries: readWorksheet(ws) };
}

/** The entries of one sheet (a workbook's, or the one exceljs reads a CSV file into); a 400 naming the row otherwise. */
export function readWorksheet(ws: ExcelJS.Worksheet): DictionaryEntry[] {
  let headers: Array<string | undefined> | undefined;
  let headerRow = 0;
  const records: Array<Record<string, unknown>> = [];
  const rowNumbers: number[] = [];
  ws.eachRow({ includeEmpty: false }, (row, n) => {
    const cells: string[] = [];
    row.eachCell({ includeEmpty: true }, (cell, col) => {
      cells[col] = cellText(cell);
    });
    if (!headers) {
      headers = cells.map((c) => (c && headerKey(c) ? c : undefined));
      headerRow = n;
      return;
    }
    const r: Record<string, unknown> = {};
    cells.forEach((value, col) => {
      const h = headers![col];
      if (h) r[h] = value;
    });
    records.push(r);
    rowNumbers.push(n);
  });
  const named = new Set((headers ?? []).filter((h): h is string => !!h).map((h) => headerKey(h)));
  if (!named.has('column_name') || !(named.has('verbose_name') || named.has('description'))) {
    throw new ValidationError(
      `sheet '${ws.name}' needs a header row naming column_name and verbose_name and/or description (optionally table_name)${headerRow ? `; row ${headerRow} holds none of them` : ''}`,
      [{ field: FIELD, message: 'no header row with column_name and verbose_name or description' }],
    );
  }
  const { entries, problems } = normaliseEntries(records, (i) => `row ${rowNumbers[i]}`);
  assertNoProblems(problems, `sheet '${ws.name}'`);
  if (!entries.length)
    throw new ValidationError(`sheet '${ws.name}' has a header row but no entries`, [{ field: FIELD, message: 'no entries' }]);
  return entries;
}

function cellText(cell: ExcelJS.Cell): string {
  const v = cell.value;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object' && !(v instanceof Date)) {
    if ('richText' in v) return v.richText.map((t) => t.text).join('');
    if ('result' in v) return v.result === undefined || v.result === null ? '' : String(v.result);
    if ('text' in v) return String(v.text);
    if ('error' in v) return '';
  }
  return cell.text ?? String(v);
}

/**
 * The workbook's parts unpacked within the budget and packed again stored (level 0), or a 400:
 * not a ZIP, a ZIP without xl/workbook.xml, too many parts, declared sizes past the budget, or a
 * part that inflates past the size it declares (stopped as it does).
 */
function unpackWorkbook(bytes: Buffer): Buffer {
  let parts: Map<string, Uint8Array>;
  try {
    parts = unzipWithin(bytes, { maxBytes: MAX_UNPACKED_BYTES, maxEntries: MAX_ARCHIVE_FILES });
  } catch (err) {
    if (!(err instanceof ArchiveError)) throw err;
    throw new ValidationError(archiveRefusal(err), [
      { field: FIELD, message: err.problem === 'too_large' ? 'workbook too large once unpacked' : 'not a readable .xlsx workbook' },
    ]);
  }
  if (!parts.has('xl/workbook.xml')) {
    throw new ValidationError('the file is a ZIP archive but not an .xlsx workbook (it has no xl/workbook.xml)', [
      { field: FIELD, message: 'not an .xlsx workbook' },
    ]);
  }
  return Buffer.from(zipSync(Object.fromEntries(parts), { level: 0 }));
}

function archiveRefusal(err: ArchiveError): string {
  if (err.problem === 'too_large' && err.declared)
    return `the workbook would unpack to ${Math.round(err.declared.bytes / 1024 / 1024)} MB in ${err.declared.entries} parts; at most ${MAX_UNPACKED_BYTES / 1024 / 1024} MB in ${MAX_ARCHIVE_FILES} parts is accepted`;
  if (err.problem === 'unreadable' && !err.entry) return 'the file is not an .xlsx workbook (not a ZIP archive)';
  return `the workbook cannot be unpacked: ${err.message}`;
}
