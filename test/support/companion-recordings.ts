import { COMPANION_KINDS } from '../../contracts/companions.ts';
import type { CapturedKinds } from '../../domain/migration/companions/documents.ts';

// What the Superset-free companion document tests (git's files, a backup's format) build their
// recordings from: fixed uuids, every kind captured, and an object's meta with nothing set.

export const D = '11111111-1111-4111-8111-111111111111';
export const C = '22222222-2222-4222-8222-222222222222';
export const S = '33333333-3333-4333-8333-333333333333';
export const DB = '44444444-4444-4444-8444-444444444444';
export const ALL = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'captured'])) as CapturedKinds;

/** An object's meta as the kinds read it, empty but for `over`. */
export const meta = (over: Record<string, unknown>) => ({
  owners: [],
  roles: [],
  tags: [],
  certified_by: null,
  certification_details: null,
  params: null,
  css: null,
  database_id: null,
  sql: null,
  table_name: null,
  ...over,
});
