/** PostgreSQL's unique_violation (23505), however knex or pg wrapped it. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; nativeError?: { code?: string } } | null;
  return e?.code === '23505' || e?.nativeError?.code === '23505';
}
