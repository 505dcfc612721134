/**
 * Reads a column dictionary from a CSV file (UTF-8, comma-separated, a header row as in a
 * workbook) with exceljs's CSV reader, then the same sheet rules as a workbook.
 */
import { Readable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { ValidationError } from '../errors.ts';
import type { DictionaryEntry } from './entries.ts';
import { loadExcel, readWorksheet } from './xlsx.ts';

export async function parseDictionaryCsv(bytes: Buffer): Promise<DictionaryEntry[]> {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (text.includes('\u0000'))
    throw new ValidationError('the file is not a CSV text file', [{ field: 'body.file', message: 'not a CSV file' }]);
  const wb = new (await loadExcel()).Workbook();
  let ws: ExcelJS.Worksheet;
  try {
    // Every cell as text: a column named "1" or "2026-01-01" stays what it says.
    ws = await wb.csv.read(Readable.from([text]), { parserOptions: { delimiter: ',' }, map: (v: unknown) => v });
  } catch (err) {
    throw new ValidationError(`the file is not a readable CSV file: ${err instanceof Error ? err.message : String(err)}`, [
      { field: 'body.file', message: 'not a readable CSV file' },
    ]);
  }
  return readWorksheet(ws);
}
