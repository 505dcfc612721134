import type { Knex } from 'knex';
import type { ImportedFilter } from '../../lib/dataset-review/filters.ts';
import type { TemplateVariable } from '../../lib/dataset-review/jinja.ts';
import { maskFilterValues } from '../../lib/dataset-review/filters.ts';
import { NotFoundError, VersionConflictError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';

export type SessionState = 'ready' | 'recovery-required' | 'launched';

export interface RecoveryMarker {
  /** What is missing: dashboard, permalink, chart, dataset, filter_column, dataset_choice. */
  kind: string;
  ref: string | null;
  detail: string;
  /** Superset's own words, when it refused. */
  upstream_error?: string | null;
}

export interface SessionDataset {
  id: number;
  table_name: string;
  database_id: number | null;
  schema: string | null;
  catalog: string | null;
  sql: string | null;
  template_params: Record<string, unknown>;
  kind: 'virtual' | 'physical';
  url: string | null;
}

export interface SessionRow {
  id: string;
  owner_id: string;
  owner_username: string;
  env_id: string;
  link: string;
  link_kind: string;
  state: SessionState;
  version: number;
  title: string | null;
  dashboard: { id: number; title: string | null; slug: string | null; url: string | null } | null;
  dataset: SessionDataset | null;
  candidate_datasets: Array<{ id: number; table_name: string | null; charts: number[] }>;
  charts: Array<{ id: number; name: string | null; dataset_id: number | null; missing: boolean }>;
  imported_filters: ImportedFilter[];
  template_variables: TemplateVariable[];
  recovery_markers: RecoveryMarker[];
  dictionary_id: string | null;
  dictionary_version: number | null;
  preview: Record<string, unknown> | null;
  launch: Record<string, unknown> | null;
  note: string | null;
  created_at: Date;
  updated_at: Date;
}

export type NewSession = Pick<
  SessionRow,
  | 'owner_id'
  | 'owner_username'
  | 'env_id'
  | 'link'
  | 'link_kind'
  | 'state'
  | 'title'
  | 'dashboard'
  | 'dataset'
  | 'candidate_datasets'
  | 'charts'
  | 'imported_filters'
  | 'template_variables'
  | 'recovery_markers'
  | 'dictionary_id'
  | 'dictionary_version'
>;

const JSON_COLUMNS = [
  'dashboard',
  'dataset',
  'candidate_datasets',
  'charts',
  'imported_filters',
  'template_variables',
  'recovery_markers',
  'preview',
  'launch',
] as const;

function encode(patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch))
    out[k] = (JSON_COLUMNS as readonly string[]).includes(k) && v !== null && v !== undefined ? JSON.stringify(v) : v;
  return out;
}

export type SessionPatch = Partial<Omit<NewSession, 'owner_id' | 'owner_username' | 'env_id' | 'link' | 'link_kind'>> & {
  preview?: SessionRow['preview'];
  launch?: SessionRow['launch'];
  note?: string | null;
};

/** Which sessions a read or write may touch: one owner's (the API's policy decides whose). */
export interface SessionFilter {
  owner_id: string;
}

/**
 * `review_sessions`: a dataset review, owned by the user who started it. Who may read or change
 * which is the API's policy (`api/dataset-review/policy.ts`): the store applies the filter it is
 * given, and a session outside it is "not found". Every mutation of a session and of anything it holds
 * goes through `advance`: one conditional update of `version`, so of two writers holding the
 * same version exactly one wins.
 */
export class ReviewSessionStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async create(s: NewSession, trx: Knex = this.knex): Promise<SessionRow> {
    const [row] = await trx('review_sessions')
      .insert(encode({ ...s }))
      .returning('*');
    return row as SessionRow;
  }

  /** The session when it matches `filter` (404 otherwise). */
  async get(id: string, filter: SessionFilter, trx: Knex = this.knex): Promise<SessionRow> {
    const row = isUuid(id)
      ? await trx<SessionRow>('review_sessions')
          .where({ ...filter, id })
          .first()
      : undefined;
    if (!row) throw new NotFoundError('Dataset review session', id);
    return row;
  }

  async list(filter: SessionFilter, page: number, pageSize: number): Promise<{ rows: SessionRow[]; total: number }> {
    const [{ count }] = await this.knex('review_sessions').where(filter).count<{ count: string }[]>({ count: '*' });
    const rows = await this.knex<SessionRow>('review_sessions')
      .where(filter)
      .orderBy('updated_at', 'desc')
      .orderBy('id')
      .offset((page - 1) * pageSize)
      .limit(pageSize);
    return { rows, total: Number(count) };
  }

  /**
   * The one conditional update behind every mutation: moves the session from `version` to
   * `version + 1` (with `patch`), or throws 409 `version_conflict` with the current version.
   * Run it first in the mutation's transaction: the row lock it takes orders concurrent writers.
   */
  async advance(id: string, filter: SessionFilter, version: number, patch: SessionPatch = {}, trx: Knex = this.knex): Promise<SessionRow> {
    if (!isUuid(id)) throw new NotFoundError('Dataset review session', id);
    const [row] = await trx('review_sessions')
      .where({ ...filter, id, version })
      .update({ ...encode(patch), version: trx.raw('version + 1'), updated_at: trx.fn.now() })
      .returning('*');
    if (row) return row as SessionRow;
    const current = await trx<SessionRow>('review_sessions')
      .where({ ...filter, id })
      .first('version');
    if (!current) throw new NotFoundError('Dataset review session', id);
    throw new VersionConflictError(`Dataset review session ${id}`, version, current.version);
  }

  async delete(id: string, filter: SessionFilter, version: number): Promise<void> {
    if (!isUuid(id)) throw new NotFoundError('Dataset review session', id);
    const n = await this.knex('review_sessions')
      .where({ ...filter, id, version })
      .delete();
    if (n) return;
    const current = await this.knex<SessionRow>('review_sessions')
      .where({ ...filter, id })
      .first('version');
    if (!current) throw new NotFoundError('Dataset review session', id);
    throw new VersionConflictError(`Dataset review session ${id}`, version, current.version);
  }

  /** Sessions using a dictionary, for the version change that marks their unlocked fields for review. */
  async usingDictionary(dictionaryId: string, trx: Knex = this.knex): Promise<SessionRow[]> {
    return trx<SessionRow>('review_sessions').where({ dictionary_id: dictionaryId });
  }

  /** Records a new dictionary version on a session (no user write: the version still moves, so stale edits are refused). */
  async markDictionaryVersion(id: string, version: number, trx: Knex = this.knex): Promise<void> {
    await trx('review_sessions')
      .where({ id })
      .update({ dictionary_version: version, version: trx.raw('version + 1'), updated_at: trx.fn.now() });
  }

  /** Records a launch's handoff when its task ends (the task runs as the owner). */
  async recordLaunch(id: string, launch: Record<string, unknown>, state: SessionState | null, trx: Knex = this.knex): Promise<void> {
    await trx('review_sessions')
      .where({ id })
      .update({ launch: JSON.stringify(launch), ...(state ? { state } : {}), version: trx.raw('version + 1'), updated_at: trx.fn.now() });
  }

  async getById(id: string): Promise<SessionRow | undefined> {
    return isUuid(id) ? this.knex<SessionRow>('review_sessions').where({ id }).first() : undefined;
  }
}

/**
 * For the assistant: the session only when it matches `filter` (undefined otherwise, so a bound
 * message cannot read another user's review), with imported filters' values masked.
 */
export async function loadOwnedSessionForAssistant(
  store: ReviewSessionStore,
  id: string,
  filter: SessionFilter,
): Promise<SessionRow | undefined> {
  try {
    const s = await store.get(id, filter);
    return { ...s, imported_filters: s.imported_filters.map(maskFilterValues) };
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

export { maskFilterValues };
