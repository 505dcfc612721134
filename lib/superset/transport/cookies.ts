/**
 * Cookies one standing with a Superset holds (Flask's `session`, the async-query token), sent
 * back on its calls only. Values are secrets: never logged.
 */
import type { IncomingHttpHeaders } from 'node:http';

export class CookieJar {
  private readonly cookies = new Map<string, string>();

  get size(): number {
    return this.cookies.size;
  }

  values(): IterableIterator<string> {
    return this.cookies.values();
  }

  clear(): void {
    this.cookies.clear();
  }

  /** The `Cookie` header to send, if any cookie is held. */
  header(): string | undefined {
    return this.cookies.size ? [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }

  /** Keeps what an answer's `Set-Cookie` headers set, and drops what they expire. */
  keep(res: { headers: IncomingHttpHeaders }): void {
    const raw = res.headers['set-cookie'];
    for (const c of Array.isArray(raw) ? raw : raw ? [raw] : []) {
      const pair = c.split(';', 1)[0];
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/;\s*max-age=0/i.test(c) || /;\s*expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}
