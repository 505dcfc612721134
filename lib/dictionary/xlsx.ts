/**
 * Reads a column dictionary from an .xlsx workbook with exceljs: the first row that is not empty
 * names the columns (`column_name`, and `verbose_name` and/or `description`, optionally
 * `table_name`), every row below it is an entry.
 *
 * An .xlsx is a ZIP archive, and a small upload can unpack to gigabytes: the archive's own
 * directory is read first (fflate, without inflating anything) and a workbook that would unpack
 * beyond MAX_UNPACKED_BYTES is refused before exceljs opens it.
 */
import type ExcelJS from 'exceljs';
import { unzipSync } from 'fflate';
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
  checkArchive(bytes);
  const wb = new (await loadExcel()).Workbook();
  try {
    await wb.xlsx.load(bytes as unknown as ArrayBuffer);
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
  if (!entries.length) throw new ValidationError(`sheet '${ws.name}' has a header row but no entries`, [{ field: FIELD, message: 'no entries' }]);
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

/** Refuses what is not a ZIP, or one that would unpack to more than MAX_UNPACKED_BYTES. */
function checkArchive(bytes: Buffer): void {
  let total = 0;
  let files = 0;
  let workbookPart = false;
  try {
    unzipSync(bytes, {
      filter(f) {
        files++;
        total += f.originalSize;
        if (f.name === 'xl/workbook.xml') workbookPart = true;
        return false; // read the directory only; inflate nothing
      },
    });
  } catch {
    throw new ValidationError('the file is not an .xlsx workbook (not a ZIP archive)', [{ field: FIELD, message: 'not an .xlsx workbook' }]);
  }
  if (!workbookPart && files <= MAX_ARCHIVE_FILES && total <= MAX_UNPACKED_BYTES) {
    throw new ValidationError('the file is a ZIP archive but not an .xlsx workbook (it has no xl/workbook.xml)', [{ field: FIELD, message: 'not an .xlsx workbook' }]);
  }
  if (files > MAX_ARCHIVE_FILES || total > MAX_UNPACKED_BYTES) {
    throw new ValidationError(
      `the workbook would unpack to ${Math.round(total / 1024 / 1024)} MB in ${files} parts; at most ${MAX_UNPACKED_BYTES / 1024 / 1024} MB is accepted`,
      [{ field: FIELD, message: 'workbook too large once unpacked' }],
    );
  }
}
