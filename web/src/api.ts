/**
 * The console's only way to the server: the typed client generated from the route table, so a
 * page cannot call an endpoint or send a body the API does not document.
 */
import { createSwitchyardClient } from '../../client/index.ts';

const TOKEN_KEY = 'switchyard.token';

/**
 * The access token lives in sessionStorage rather than only in memory: each page has its own URL
 * and a reload (or a link opened in the same tab) must not sign the user out, while closing the
 * tab forgets it. It is never put in localStorage, cookies or URLs.
 */
export const session = {
  get token(): string | undefined {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  },
  set(token: string | undefined) {
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      sessionExpired = false;
    } else sessionStorage.removeItem(TOKEN_KEY);
    listeners.forEach((l) => l());
  },
  subscribe(l: () => void) {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};
const listeners = new Set<() => void>();

/** Set when the server answered 401 to a signed-in request: the UI asks to sign in again. */
export let sessionExpired = false;

export const api = createSwitchyardClient({ baseUrl: window.location.origin, token: () => session.token });
api.use({
  onResponse({ response }) {
    if (response.status === 401 && session.token) {
      sessionExpired = true;
      session.set(undefined);
    }
    return response;
  },
});

/** An RFC 9457 problem body, or what we could make of a non-problem answer. */
export interface Problem {
  status: number;
  title: string;
  detail?: string;
  type?: string;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title);
  }
}

/** Unwraps an openapi-fetch answer: the data, or an ApiError carrying the problem body. */
export async function must<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (response.ok) return data as T;
  const e = (error ?? {}) as Partial<Problem>;
  throw new ApiError({ status: response.status, title: e.title ?? response.statusText, detail: e.detail, type: e.type });
}

/** A raw authorised fetch for what the typed client does not model (binary thumbnails, event streams). */
export function authFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (session.token) headers.set('Authorization', `Bearer ${session.token}`);
  return fetch(path, { ...init, headers });
}

export interface SseEvent {
  event: string;
  id?: string;
  data: unknown;
}

/**
 * Follows a server-sent event stream with the bearer token (EventSource cannot send headers):
 * parses `event:`/`id:`/`data:` blocks as they arrive. Resolves when the stream ends.
 */
export async function followEvents(path: string, onEvent: (e: SseEvent) => void, signal: AbortSignal): Promise<void> {
  const res = await authFetch(path, { signal, headers: { Accept: 'text/event-stream' } });
  if (!res.ok || !res.body) throw new ApiError({ status: res.status, title: res.statusText });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const ev: SseEvent = { event: 'message', data: undefined };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (!data.length) continue;
      try {
        ev.data = JSON.parse(data.join('\n'));
      } catch {
        ev.data = data.join('\n');
      }
      onEvent(ev);
    }
  }
}
