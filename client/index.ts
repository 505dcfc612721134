/**
 * The typed client of Switchyard's HTTP API, for the CLI, the web console and scripts. The types
 * (`schema.d.ts`) are generated from the OpenAPI document the route table produces
 * (`npm run gen:client`, run by `npm install`), so a client built on them cannot drift from the API.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.d.ts';

export type { paths };

export interface ClientOptions {
  baseUrl: string;
  /** A bearer token: an access token or an API key. */
  token?: string | (() => string | undefined);
  fetch?: typeof fetch;
}

export function createSwitchyardClient(opts: ClientOptions) {
  const client = createClient<paths>({ baseUrl: opts.baseUrl.replace(/\/+$/, ''), ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = typeof opts.token === 'function' ? opts.token() : opts.token;
      if (token) request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}

export type SwitchyardClient = ReturnType<typeof createSwitchyardClient>;
