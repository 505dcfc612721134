import { createSwitchyardClient, type SwitchyardClient } from '../client/index.ts';
import type { Connection } from './config.ts';
import { CliError, EXIT } from './exit-codes.ts';

export interface Api {
  client: SwitchyardClient;
  connection: Connection;
}

/** The typed client, sending the API key as X-API-Key (a bearer is a sign-in's access token). */
export function connect(connection: Connection): Api {
  const client = createSwitchyardClient({ baseUrl: connection.url, token: connection.token });
  if (connection.apiKey) {
    const key = connection.apiKey;
    client.use({
      onRequest({ request }) {
        request.headers.set('X-API-Key', key);
        return request;
      },
    });
  }
  return { client, connection };
}

interface Problem {
  title?: string;
  detail?: string;
  code?: string;
  errors?: Array<{ field: string; message: string }>;
}

/** The answer's data, or a CliError carrying the API's problem (400: the arguments were wrong, exit 3). */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let answer: { data?: T; error?: unknown; response: Response };
  try {
    answer = await call;
  } catch (err) {
    throw new CliError(`cannot reach the Switchyard API: ${(err as Error).cause ? String((err as Error).cause) : (err as Error).message}`);
  }
  const { data, error, response } = answer;
  if (response.ok) return data as T;
  const p = (error ?? {}) as Problem;
  const fields = p.errors?.length ? ` (${p.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
  throw new CliError(
    `${response.status} ${p.code ?? p.title ?? response.statusText}: ${p.detail ?? p.title ?? 'refused'}${fields}`,
    response.status === 400 || response.status === 422 ? EXIT.USAGE : EXIT.FAILURE,
    error,
  );
}

/** An environment by id or name (case-insensitive), as people type them. */
export async function envId(api: Api, ref: string): Promise<string> {
  const { items } = await unwrap(api.client.GET('/api/environments'));
  const hit = items.find((e) => e.id === ref) ?? items.find((e) => e.name.toLowerCase() === ref.toLowerCase());
  if (!hit) throw new CliError(`no environment '${ref}' (known: ${items.map((e) => e.name).join(', ') || 'none'})`, EXIT.USAGE);
  return hit.id;
}
