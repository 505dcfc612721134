const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its canonical text form; anything else cannot be the id of a row keyed by one. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
