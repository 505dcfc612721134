/**
 * The one way a ZIP archive that came from outside (a Superset export, a stored backup, an
 * uploaded .xlsx workbook) is unpacked: within a byte budget counted as the entries inflate, not
 * as the archive declares them.
 *
 * A ZIP states each entry's unpacked size in its directory, but nothing makes the deflate stream
 * agree: a few KiB can declare a few bytes and inflate to gigabytes. So the directory is read
 * first (adm-zip: names, declared sizes and where each entry's data lies, nothing inflated) and
 * its declared total held to the budget; then each entry is inflated by Node's zlib with
 * `maxOutputLength` set to the size it declared, which stops inflating the moment the output
 * passes it. An entry that inflates to more (or fewer) bytes than it declared, or whose checksum
 * differs, refuses the whole archive: the bytes actually produced never pass the budget.
 */
import zlib from 'node:zlib';
import AdmZip from 'adm-zip';

export interface UnzipLimits {
  /** Most bytes the unpacked entries may add up to. */
  maxBytes: number;
  /** Most entries (files and folders) the archive may list. */
  maxEntries: number;
}

export type ArchiveProblem = 'unreadable' | 'too_large' | 'size_mismatch';

/** An archive refused, and why; `entry` names the entry at fault when one is. */
export class ArchiveError extends Error {
  override name = 'ArchiveError';
  readonly problem: ArchiveProblem;
  readonly entry?: string;
  /** What the directory declares: entries and their unpacked bytes (with `too_large`). */
  readonly declared?: { entries: number; bytes: number };
  constructor(
    problem: ArchiveProblem,
    message: string,
    opts: { entry?: string; declared?: { entries: number; bytes: number }; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.problem = problem;
    this.entry = opts.entry;
    this.declared = opts.declared;
  }
}

const STORED = 0;
const DEFLATED = 8;

export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round((n / 1024 / 1024) * 10) / 10} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}

function readDirectory(zip: Uint8Array): AdmZip.IZipEntry[] {
  try {
    // A Buffer, never a string: adm-zip reads a string as a file name.
    return new AdmZip(Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength), { noSort: true }).getEntries();
  } catch (err) {
    throw new ArchiveError('unreadable', `not a readable ZIP archive: ${(err as Error).message}`, { cause: err });
  }
}

/** The entry's name as fflate and Python's zipfile read it: UTF-8 when flagged so, else Latin-1. */
function nameOf(e: AdmZip.IZipEntry): string {
  return Buffer.from(e.rawEntryName).toString(e.header.flags_efs ? 'utf8' : 'latin1');
}

/** What the archive's directory declares (entries, and the unpacked bytes of its files), nothing inflated: a size to plan by, not a budget's proof. */
export function declaredSize(zip: Uint8Array): { entries: number; bytes: number } {
  const entries = readDirectory(zip);
  return { entries: entries.length, bytes: entries.reduce((sum, e) => sum + (e.isDirectory ? 0 : e.header.size), 0) };
}

/**
 * The archive's files (folders left out) whose names `wanted` accepts, path → bytes. Throws
 * ArchiveError: `unreadable` (not a ZIP, a broken entry, an encrypted or unknown compression),
 * `too_large` (more entries than `maxEntries`, or declared sizes past `maxBytes`, before anything
 * inflates), `size_mismatch` (an entry inflating to other than it declared, stopped as it passes).
 */
export function unzipWithin(zip: Uint8Array, limits: UnzipLimits, wanted: (name: string) => boolean = () => true): Map<string, Uint8Array> {
  const entries = readDirectory(zip);
  const picked = entries.filter((e) => !e.isDirectory && wanted(nameOf(e)));
  const declaredBytes = picked.reduce((sum, e) => sum + e.header.size, 0);
  const declared = { entries: entries.length, bytes: declaredBytes };
  if (entries.length > limits.maxEntries)
    throw new ArchiveError('too_large', `the archive lists ${entries.length} entries; at most ${limits.maxEntries} are accepted`, {
      declared,
    });
  if (declaredBytes > limits.maxBytes)
    throw new ArchiveError(
      'too_large',
      `the archive would unpack to ${formatBytes(declaredBytes)}; at most ${formatBytes(limits.maxBytes)} is accepted`,
      { declared },
    );
  const out = new Map<string, Uint8Array>();
  for (const e of picked) out.set(nameOf(e), inflateEntry(e));
  return out;
}

/** One entry's bytes, inflated no further than the size it declares. */
function inflateEntry(e: AdmZip.IZipEntry): Uint8Array {
  const name = nameOf(e);
  const { size, method } = e.header;
  if (e.header.encrypted) throw new ArchiveError('unreadable', `${name} in the archive is encrypted`, { entry: name });
  let data: Buffer;
  try {
    const raw = e.getCompressedData();
    if (method === STORED) data = raw;
    else if (method === DEFLATED) data = zlib.inflateRawSync(raw, { maxOutputLength: Math.max(size, 1) });
    else throw new ArchiveError('unreadable', `${name} in the archive uses compression method ${method}, not deflate`, { entry: name });
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw lie(name, size, 'more');
    throw new ArchiveError('unreadable', `${name} in the archive cannot be unpacked: ${(err as Error).message}`, {
      entry: name,
      cause: err,
    });
  }
  if (data.length !== size) throw lie(name, size, data.length > size ? 'more' : 'fewer');
  if (zlib.crc32(data) >>> 0 !== e.header.crc >>> 0)
    throw new ArchiveError('unreadable', `${name} in the archive fails its checksum`, { entry: name });
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

function lie(name: string, size: number, which: 'more' | 'fewer'): ArchiveError {
  return new ArchiveError(
    'size_mismatch',
    `${name} in the archive unpacks to ${which} than the ${formatBytes(size)} its directory declares (refused as it unpacked)`,
    { entry: name },
  );
}
