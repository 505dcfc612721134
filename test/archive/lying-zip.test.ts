// Why the fake: hostile ZIPs answered as exports (sizes that lie, paths that leave the folder), which a real Superset never sends.
import { createHash, randomUUID } from 'node:crypto';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveError, unzipWithin } from '../../lib/archive/unzip.ts';
import { createBackupStore } from '../../lib/backup-store/index.ts';
import { Bundle, BundleError } from '../../lib/bundles/bundle.ts';
import { parseDictionaryWorkbook } from '../../lib/dictionary/xlsx.ts';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { dictionaryWorkbook } from '../support/datasets.ts';
import { createEnvironment } from '../support/environments.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';
import { createHarness, type Harness } from '../support/harness.ts';

// A ZIP's directory says how large each entry unpacks; nothing makes the deflate stream agree.
// These archives are built here: a stream of 128 MiB of newlines (about 128 KiB deflated) whose
// local header and central directory both declare a few bytes. Every place an archive from
// outside is unpacked (Superset exports as bundles and as git files, stored backups read by a
// release, .xlsx uploads) refuses it, naming the entry, and still takes an honest archive.
const INFLATED = 128 * 1024 * 1024;

/** Patches the uncompressed size `name` declares, in the central directory and its local header. */
function declareSize(zip: Uint8Array, name: string, size: number): Uint8Array {
  const b = Buffer.from(zip);
  const eocd = b.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let p = b.readUInt32LE(eocd + 16);
  let patched = 0;
  for (let i = 0, n = b.readUInt16LE(eocd + 10); i < n; i++) {
    const [nameLen, extra, comment] = [b.readUInt16LE(p + 28), b.readUInt16LE(p + 30), b.readUInt16LE(p + 32)];
    if (b.subarray(p + 46, p + 46 + nameLen).toString() === name) {
      b.writeUInt32LE(size, p + 24);
      b.writeUInt32LE(size, b.readUInt32LE(p + 42) + 22);
      patched++;
    }
    p += 46 + nameLen + extra + comment;
  }
  expect(patched, `${name} in the archive`).toBe(1);
  return new Uint8Array(b);
}

/** `prefix` followed by newlines up to INFLATED bytes, declared as `prefix` alone: truncated, it still reads. */
function lying(entries: Record<string, Uint8Array>, liar: string, prefix: string): Uint8Array {
  const data = new Uint8Array(INFLATED).fill(0x0a);
  data.set(strToU8(prefix));
  const zip = declareSize(zipSync({ ...entries, [liar]: data }, { level: 9 }), liar, prefix.length);
  expect(zip.byteLength).toBeLessThan(1024 * 1024);
  return zip;
}

const DASH = '0b7a1e3c-59a4-4c3e-9d0f-3c1b2a4d5e6f';
const exportEntries = () => ({
  'dashboard_export/dashboards/Sales_1.yaml': strToU8(`dashboard_title: Sales\nuuid: ${DASH}\nposition: {}\n`),
});
const META = 'version: 1.0.0\ntype: Dashboard\n';
const honestExport = () => zipSync({ ...exportEntries(), 'dashboard_export/metadata.yaml': strToU8(META) });
let lyingExportZip: Uint8Array | undefined;
const lyingExport = () => (lyingExportZip ??= lying(exportEntries(), 'dashboard_export/metadata.yaml', META));

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

let workbooks: Promise<{ honest: Buffer; lie: Buffer }> | undefined;
function lyingWorkbook(): Promise<{ honest: Buffer; lie: Buffer }> {
  return (workbooks ??= dictionaryWorkbook([{ column_name: 'ds', verbose_name: 'Day', description: 'the day' }]).then((honest) => ({
    honest,
    lie: Buffer.from(lying(unzipSync(new Uint8Array(honest)), 'xl/media/padding.xml', '<x/>')),
  })));
}

describe('an archive that inflates past what it declares', () => {
  it('the one decider stops the entry as it passes its declared size, and refuses the archive naming it', () => {
    const err = thrown(() => unzipWithin(lyingExport(), { maxBytes: 64 * 1024 * 1024, maxEntries: 10 }));
    expect(err).toBeInstanceOf(ArchiveError);
    expect(err).toMatchObject({ problem: 'size_mismatch', entry: 'dashboard_export/metadata.yaml' });
    expect((err as Error).message).toMatch(/unpacks to more than the 31 bytes its directory declares/);
    const honest = unzipWithin(honestExport(), { maxBytes: 1024, maxEntries: 10 });
    expect(new TextDecoder().decode(honest.get('dashboard_export/metadata.yaml'))).toBe(META);
    // Declared sizes past the budget are refused before anything inflates.
    expect(thrown(() => unzipWithin(honestExport(), { maxBytes: 100, maxEntries: 10 }))).toMatchObject({ problem: 'too_large' });
    expect(thrown(() => unzipWithin(honestExport(), { maxBytes: 1024, maxEntries: 1 }))).toMatchObject({ problem: 'too_large' });
  });

  it('a Superset export read as a bundle and as git files is refused; the honest one still reads', () => {
    const bundle = thrown(() => Bundle.fromZip(lyingExport()));
    expect(bundle).toBeInstanceOf(BundleError);
    expect((bundle as Error).message).toMatch(/metadata\.yaml in the archive unpacks to more than/);
    const files = thrown(() => filesFromExport(lyingExport()));
    expect(files).toBeInstanceOf(BundleError);
    expect(Bundle.fromZip(honestExport()).files.has('metadata.yaml')).toBe(true);
    expect(filesFromExport(honestExport()).dashboardUuid).toBe(DASH);
  });

  it('an .xlsx workbook is refused with a 400 naming the part before exceljs sees it; the honest one parses', async () => {
    const { honest, lie } = await lyingWorkbook();
    const err = await parseDictionaryWorkbook(lie).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ status: 400, errors: [{ field: 'body.file' }] });
    expect((err as Error).message).toMatch(/xl\/media\/padding\.xml in the archive unpacks to more than/);
    expect((await parseDictionaryWorkbook(honest)).entries).toEqual([expect.objectContaining({ column_name: 'ds' })]);
  });
});

describe('through the API: uploads and stored bundles that lie about their size are refused', () => {
  let h: Harness;
  let fake: FakeSuperset;
  let env: string;
  const admin = (m: string, p: string, json?: unknown) => h.request(m, p, { token: h.adminToken, ...(json === undefined ? {} : { json }) });

  beforeAll(async () => {
    [h, fake] = await Promise.all([createHarness({ worker: true }), startFakeSuperset()]);
    env = await createEnvironment(h, { baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  /** A backup row whose stored blob is `zip`, under `hash` (the restore holds the unpacked bundle to it). */
  const backup = async (zip: Uint8Array, hash = createHash('sha256').update(zip).digest('hex')) => {
    const store = createBackupStore(h.config);
    await store.put(hash, zip);
    const [row] = await h
      .knex('backups')
      .insert({
        env_id: env,
        dashboard_id: 1,
        dashboard_uuid: DASH,
        dashboard_title: 'Sales',
        content_hash: hash,
        size: zip.byteLength,
        store_kind: store.kind,
        deduplicated: false,
      })
      .returning('id');
    return row.id as string;
  };

  it('a dictionary version and a column-mapping workbook: 400 on body.file naming the part; the honest workbook is taken', async () => {
    const { honest, lie } = await lyingWorkbook();
    const dict = await admin('POST', '/api/dataset-review/dictionaries', { name: `lying-${randomUUID().slice(0, 8)}` });
    expect(dict.status, dict.text).toBe(201);
    const version = (bytes: Buffer) => {
      const f = new FormData();
      f.set('file', new Blob([new Uint8Array(bytes)]), 'd.xlsx');
      return h.request('POST', `/api/dataset-review/dictionaries/${dict.body.id}/versions`, { token: h.adminToken, multipart: f });
    };
    const refused = await version(lie);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.errors[0].field).toBe('body.file');
    expect(refused.body.detail).toMatch(/xl\/media\/padding\.xml in the archive unpacks to more than/);
    expect((await version(honest)).status).toBe(201);

    const mapColumns = new FormData();
    mapColumns.set('env_id', env);
    mapColumns.set('dataset_ids', '1');
    mapColumns.set('source_type', 'xlsx');
    mapColumns.set('file', new Blob([new Uint8Array(lie)]), 'd.xlsx');
    const mc = await h.request('POST', '/api/datasets/map-columns', { token: h.adminToken, multipart: mapColumns });
    expect(mc.status, mc.text).toBe(400);
    expect(mc.body.detail).toMatch(/xl\/media\/padding\.xml in the archive unpacks to more than/);
  });

  it('a release artifact read from a stored backup whose zip lies: 400 source_unreadable; an honest backup imports', async () => {
    const candidate = async (backupId: string) => {
      const c = await admin('POST', '/api/v2/clean-release/candidates', {
        name: `lying-${randomUUID().slice(0, 8)}`,
        target_env_id: env,
        sources: [{ kind: 'backup', backup_id: backupId }],
      });
      expect(c.status, c.text).toBe(201);
      return admin('POST', `/api/v2/clean-release/candidates/${c.body.id}/artifacts`, {});
    };
    const refused = await candidate(await backup(lyingExport()));
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe('source_unreadable');
    expect(refused.body.detail).toMatch(/metadata\.yaml in the archive unpacks to more than/);
    const ok = await candidate(await backup(honestExport()));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.artifacts[0].dashboard_uuid).toBe(DASH);
  });

  it('a restore of a stored backup whose zip lies fails as an item at read_backup, naming the entry; nothing is imported', async () => {
    // Truncated at the size it declares, the lying export is the honest one: the same content hash.
    const hash = Bundle.fromZip(honestExport()).contentHash();
    const id = await backup(lyingExport(), hash);
    const imports = fake.count('/api/v1/dashboard/import/');
    const r = await admin('POST', `/api/dashboards/backups/${id}/restore`, {});
    expect(r.status, r.text).toBe(202);
    const task = await h.waitForTask(r.body.task_id);
    const item = task.result.items[0];
    expect(item).toMatchObject({
      outcome: 'failed',
      step: 'read_backup',
      next_actions: [expect.objectContaining({ action: 'inspect_export' })],
    });
    expect(item.error).toMatch(/metadata\.yaml in the archive unpacks to more than/);
    expect(fake.count('/api/v1/dashboard/import/')).toBe(imports);
  }, 60_000);
});
