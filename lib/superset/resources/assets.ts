/** Bundles: the ZIP exports of dashboards, charts, datasets and databases, and their imports. */
import { FormData } from 'undici';
import { normaliseErrorBody, SupersetImportError, SupersetUnavailableError } from '../errors.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { tryJson, type CallSpec } from '../transport/wire.ts';
import type { ImportOptions, Resource } from '../types.ts';

export class Assets {
  private readonly http: SupersetTransport;

  constructor(http: SupersetTransport) {
    this.http = http;
  }

  /** `GET /api/v1/<resource>/export/?q=!(ids)`: a ZIP bundle of those objects and what they use. */
  async export(resource: Resource, ids: number[]): Promise<Buffer> {
    if (!ids.length) throw new TypeError('export needs at least one id');
    ids.forEach((id) => seg(id));
    const spec: CallSpec = {
      method: 'GET',
      path: `/api/v1/${resource}/export/`,
      q: ids,
      accept: 'application/zip, application/json',
      maxBytes: this.http.maxBinaryBytes,
    };
    return this.http.call(spec, (res) => {
      if (res.body.length < 4 || res.body.readUInt32LE(0) !== 0x04034b50) {
        throw new SupersetUnavailableError(
          'bad_response',
          `Superset's ${resource} export answered ${res.headers['content-type'] ?? 'no content type'}, not a ZIP`,
          {
            method: 'GET',
            path: spec.path,
            upstreamStatus: res.status,
          },
        );
      }
      return res.body;
    });
  }

  /**
   * `POST /api/v1/<resource>/import/`, multipart with the bundle in the field `formData` and
   * `overwrite` as the string "true" or "false". Only dashboards honour `overwrite` for the
   * objects they pull in; chart, dataset and database imports overwrite their own kind. A refused
   * bundle (400/422) raises SupersetImportError whose `files` maps each bundle path to Superset's
   * messages; a 500 ("Import dashboard failed for an unknown reason") is a SupersetUnavailableError
   * with reason `server_error`, which classifySupersetFailure does not call retryable.
   */
  async import(resource: Resource, zip: Buffer | Uint8Array, opts: ImportOptions = {}): Promise<void> {
    const form = new FormData();
    form.set('formData', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), `${resource}s.zip`);
    form.set('overwrite', opts.overwrite ? 'true' : 'false');
    const spec: CallSpec = { method: 'POST', path: `/api/v1/${resource}/import/`, form, pass: [400, 422] };
    await this.http.call(spec, (res) => {
      if (res.status === 400 || res.status === 422) {
        const body = tryJson(res.body);
        const { message, extra } = normaliseErrorBody(body, `HTTP ${res.status}`);
        throw new SupersetImportError({ method: 'POST', path: spec.path, upstreamStatus: res.status }, message, body, ownRecord(extra));
      }
      return undefined;
    });
  }
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The own members of an object from an error body, on an object without a prototype and without
 * the keys that would reach one (`__proto__`, `constructor`, `prototype`): Superset's error bodies
 * name bundle files and fields, and those names are used as keys downstream.
 */
function ownRecord(value: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value ?? {})) if (k !== 'issue_codes' && !UNSAFE_KEYS.has(k)) out[k] = v;
  return out;
}
