import rison from 'rison';

/**
 * Rison for Flask-AppBuilder's `q=` parameter, as Superset's parser (Python `prison`) reads it.
 *
 * Not `rison.encode`: the JS package writes any string without a space or one of `'!:(),*@$`
 * unquoted, as an "id", but prison only accepts ASCII letters, digits, `_-./~` and non-ASCII
 * characters in an id. A search such as `a"b`, `50%`, `a#b` or one with a control character
 * then reaches Superset as invalid rison ("Not a valid rison/json argument"). Here a string is
 * left bare only when both parsers read it the same way (a plain identifier); everything else is
 * quoted, with `!` and `'` escaped as `!!` and `!'`, which expresses any text.
 */
const PLAIN_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

function encodeString(s: string): string {
  return PLAIN_ID.test(s) ? s : `'${s.replace(/[!']/g, '!$&')}'`;
}

function encodeValue(value: unknown): string {
  if (value === null) return '!n';
  if (value === true) return '!t';
  if (value === false) return '!f';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`rison cannot express ${value}`);
    return String(value).replace('e+', 'e');
  }
  if (typeof value === 'string') return encodeString(value);
  if (Array.isArray(value))
    return `!(${value
      .filter((v) => v !== undefined)
      .map(encodeValue)
      .join(',')})`;
  if (typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `(${members.map(([k, v]) => `${encodeString(k)}:${encodeValue(v)}`).join(',')})`;
  }
  throw new TypeError(`rison cannot express a ${typeof value}`);
}

export function encodeRison(value: unknown): string {
  return encodeValue(value);
}

export function decodeRison<T = unknown>(text: string): T {
  return rison.decode<T>(text);
}
