/**
 * Secret scrubbing for everything that is persisted or logged: task parameters, task log lines
 * and structured logs. Keys are matched by name; values that look like bearer tokens or JWTs are
 * masked wherever they appear in free text.
 */
export const REDACTED = '[REDACTED]';

const SECRET_KEY = /(pass(word)?|secret|token|api[_-]?key|authorization|cookie|credential|private[_-]?key|pat)$/i;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\b/g;
const KEY_VALUE = /\b(password|passwd|secret|token|api_key|apikey)=([^\s&"']+)/gi;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export function redactText(text: string, extraSecrets: readonly string[] = []): string {
  let out = text.replace(BEARER, `$1 ${REDACTED}`).replace(JWT, REDACTED).replace(KEY_VALUE, `$1=${REDACTED}`);
  for (const s of extraSecrets) if (s && s.length >= 4) out = out.split(s).join(REDACTED);
  return out;
}

/** Deep copy with secret-named keys masked and free-text values scrubbed. */
export function redact<T>(value: T, extraSecrets: readonly string[] = [], depth = 0): T {
  if (depth > 20) return REDACTED as T;
  if (typeof value === 'string') return redactText(value, extraSecrets) as T;
  if (Array.isArray(value)) return value.map((v) => redact(v, extraSecrets, depth + 1)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = isSecretKey(k) && v !== null && v !== undefined && v !== '' ? REDACTED : redact(v, extraSecrets, depth + 1);
    }
    return out as T;
  }
  return value;
}
