// Why the fake: hostile error bodies and bundles, which a real Superset never answers.
import { strToU8, zipSync } from 'fflate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Bundle, BundleError, MAX_BUNDLE_BYTES } from '../../lib/bundles/bundle.ts';
import { stripKnownRejections, stripRejectedFields } from '../../lib/bundles/rewrite.ts';
import { SupersetClient, SupersetImportError } from '../../lib/superset/index.ts';
import { startFakeSuperset, type FakeSuperset } from '../support/fake-superset.ts';

/**
 * Bundles and error bodies come from Superset, so they are input: a bundle may not unpack to
 * more than a cap, and the keys of an import's error body may not reach JavaScript's prototypes
 * when they steer which fields are deleted.
 */
const dataset = () => ({
  table_name: 'sales',
  uuid: '11111111-1111-4111-8111-111111111111',
  columns: [{ column_name: 'ds', datetime_format: null }],
});
const bundleOf = () =>
  new Bundle(
    'export',
    new Map([
      ['metadata.yaml', { path: 'metadata.yaml', kind: 'metadata' as const, content: { version: '1.0.0' } }],
      ['datasets/db/sales.yaml', { path: 'datasets/db/sales.yaml', kind: 'datasets' as const, content: dataset() }],
    ]),
  );

// An error body a broken or hostile server could send: the usual "Unknown field." tree, plus
// paths through __proto__, constructor.prototype and prototype.
const crafted = `{"errors": [{"message": "Error importing dashboard", "error_type": "GENERIC_COMMAND_ERROR", "extra": {
  "__proto__": {"toLocaleString": ["Unknown field."]},
  "datasets/db/sales.yaml": {
    "columns": {"0": {"datetime_format": ["Unknown field."]}},
    "__proto__": {"valueOf": ["Unknown field."]},
    "constructor": {"prototype": {"propertyIsEnumerable": ["Unknown field."]}},
    "table_name": {"constructor": {"prototype": {"isPrototypeOf": ["Unknown field."]}}}
  }
}}]}`;

const guarded = ['toLocaleString', 'valueOf', 'propertyIsEnumerable', 'isPrototypeOf'] as const;
const saved = Object.fromEntries(guarded.map((k) => [k, Object.getOwnPropertyDescriptor(Object.prototype, k)]));

describe('field stripping driven by error bodies', () => {
  afterEach(() => {
    // Put back whatever an unsafe implementation deleted, so one failure does not break the rest.
    for (const k of guarded) if (!Object.hasOwn(Object.prototype, k)) Object.defineProperty(Object.prototype, k, saved[k]!);
  });

  it('drops exactly the rejected fields and never walks into __proto__, constructor or prototype', () => {
    const bundle = bundleOf();
    const extra = (JSON.parse(crafted) as { errors: Array<{ extra: Record<string, unknown> }> }).errors[0].extra;
    const dropped = stripRejectedFields(bundle, extra);
    expect(dropped.map((d) => d.field)).toEqual(['columns.0.datetime_format']);
    for (const k of guarded) expect(Object.hasOwn(Object.prototype, k), k).toBe(true);
    expect(bundle.files.get('datasets/db/sales.yaml')!.content).toEqual({
      table_name: 'sales',
      uuid: dataset().uuid,
      columns: [{ column_name: 'ds' }],
    });
  });

  it('ignores learned rules that name a prototype path', () => {
    const bundle = bundleOf();
    const dropped = stripKnownRejections(bundle, [
      { kind: 'datasets', field: '__proto__.valueOf' },
      { kind: 'datasets', field: 'constructor.prototype.propertyIsEnumerable' },
      { kind: 'datasets', field: 'columns.*.datetime_format' },
    ]);
    expect(dropped.map((d) => d.field)).toEqual(['columns.0.datetime_format']);
    for (const k of guarded) expect(Object.hasOwn(Object.prototype, k), k).toBe(true);
  });

  describe('through the client', () => {
    let fake: FakeSuperset;
    let client: SupersetClient;
    beforeAll(async () => {
      fake = await startFakeSuperset();
      client = new SupersetClient({ baseUrl: fake.baseUrl, username: fake.username, password: fake.password });
    });
    afterAll(async () => {
      client?.close();
      await fake?.close();
    });

    it("keeps the crafted keys out of the import error's files, and the bundle's prototype chain intact", async () => {
      fake.failImport({ when: () => true, status: 422, body: JSON.parse(crafted) });
      const err = await client.importBundle('dashboard', bundleOf().toZip(), { overwrite: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SupersetImportError);
      const files = (err as SupersetImportError).files;
      expect(Object.keys(files)).toEqual(['datasets/db/sales.yaml']);
      const bundle = bundleOf();
      expect(stripRejectedFields(bundle, files).map((d) => d.field)).toEqual(['columns.0.datetime_format']);
      for (const k of guarded) expect(Object.hasOwn(Object.prototype, k), k).toBe(true);
    });
  });
});

describe('bundle size cap', () => {
  it('refuses a bundle that unpacks past the cap before inflating it', () => {
    const zeros = new Uint8Array(3 * 1024 * 1024).fill(0x20); // blank YAML; compresses to a few KiB
    const zip = zipSync({ 'x/metadata.yaml': strToU8('version: 1.0.0\n'), 'x/dashboards/big.yaml': zeros });
    expect(zip.byteLength).toBeLessThan(64 * 1024);
    const err = (() => {
      try {
        Bundle.fromZip(zip, 1024 * 1024);
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(BundleError);
    expect(err).toMatchObject({ problem: 'too_large', message: expect.stringMatching(/unpacks to more than 1 MiB/) });
    // Under the default cap the same bundle reads fine.
    expect(MAX_BUNDLE_BYTES).toBeGreaterThan(zeros.byteLength);
    expect(Bundle.fromZip(zip).files.has('dashboards/big.yaml')).toBe(true);
  });

  it('tells an unreadable ZIP from a ZIP that is not an export', () => {
    expect(() => Bundle.fromZip(strToU8('PK\x03\x04 not really'))).toThrow(expect.objectContaining({ problem: 'unreadable' }));
    expect(() => Bundle.fromZip(zipSync({ 'x/readme.yaml': strToU8('a: 1\n') }))).toThrow(
      expect.objectContaining({ problem: 'not_an_export' }),
    );
  });
});
