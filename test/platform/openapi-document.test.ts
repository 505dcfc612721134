import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../scripts/openapi-document.ts';
import { createHarness, type Harness } from '../support/harness.ts';

// The typed client is generated from the document scripts/openapi-document.ts builds without a
// server; it must be the document the running app serves, or the client would describe another API.
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.close());

describe('the OpenAPI document of the typed client', () => {
  it('is the document the app serves', async () => {
    const served = await h.request('GET', '/api/openapi.json');
    expect(served.status).toBe(200);
    expect(openApiDocument()).toEqual(served.body);
  });
});
