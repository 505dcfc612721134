import type { Context, Next } from 'koa';
import { ValidationError } from '../../lib/errors.ts';

/**
 * Text PostgreSQL cannot store: NUL, and UTF-16 halves without their pair (JSON can spell
 * both). Refused here, once, for the path, the query and the parsed body (keys and values),
 * before any handler can pass them to a query and turn the database's refusal into a 500.
 */
const UNSTORABLE = /\u0000|\p{Cs}/u;

function findUnstorable(value: unknown, where: string, depth = 0): string | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? where : undefined;
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const field = `${where}.${String(key)}`;
    if (typeof key === 'string' && UNSTORABLE.test(key)) return field;
    const found = findUnstorable(item, field, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path; // malformed escapes stay as typed; the router treats them the same way
  }
}

export function rejectUnstorableText() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const field =
      (UNSTORABLE.test(decodedPath(ctx.path)) ? 'path' : undefined) ??
      findUnstorable(ctx.query, 'query') ??
      findUnstorable((ctx.request as { body?: unknown }).body, 'body');
    if (field) {
      const message = 'must not contain NUL characters or unpaired UTF-16 surrogates';
      throw new ValidationError(`${field} ${message}`, [{ field, message }]);
    }
    await next();
  };
}
