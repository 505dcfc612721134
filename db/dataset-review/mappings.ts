import type { Knex } from 'knex';
import type { VariableKind } from '../../lib/dataset-review/jinja.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';

export interface MappingRow {
  id: string;
  session_id: string;
  filter_id: string;
  variable: string | null;
  variable_kind: VariableKind | null;
  value: unknown;
  origin: 'proposed' | 'manual';
  approved: boolean;
  approved_by: string | null;
  approved_at: Date | null;
  updated_by: string | null;
  updated_at: Date;
}

/** `review_mappings`: filter → template variable, as proposed at intake or set by hand, and its approval. */
export class ReviewMappingStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async replace(
    trx: Knex,
    sessionId: string,
    items: Array<{ filter_id: string; variable: string | null; variable_kind: VariableKind | null }>,
  ): Promise<void> {
    await trx('review_mappings').where({ session_id: sessionId }).delete();
    if (items.length) await trx('review_mappings').insert(items.map((m) => ({ ...m, session_id: sessionId, origin: 'proposed' })));
  }

  async list(sessionId: string, trx: Knex = this.knex): Promise<MappingRow[]> {
    return trx<MappingRow>('review_mappings').where({ session_id: sessionId }).orderBy('filter_id');
  }

  async get(sessionId: string, id: string, trx: Knex = this.knex): Promise<MappingRow> {
    const row = isUuid(id) ? await trx<MappingRow>('review_mappings').where({ id, session_id: sessionId }).first() : undefined;
    if (!row) throw new NotFoundError('Mapping', id);
    return row;
  }

  /** A manual override: kept as such, and no longer approved (it changed). */
  async patch(
    trx: Knex,
    sessionId: string,
    id: string,
    patch: { variable?: string | null; variable_kind?: VariableKind | null; value?: unknown },
    by: string | null,
  ): Promise<MappingRow> {
    const encoded: Record<string, unknown> = { ...patch };
    if ('value' in patch) encoded.value = patch.value === null || patch.value === undefined ? null : JSON.stringify(patch.value);
    const [row] = await trx('review_mappings')
      .where({ id, session_id: sessionId })
      .update({
        ...encoded,
        origin: 'manual',
        approved: false,
        approved_by: null,
        approved_at: null,
        updated_by: by,
        updated_at: trx.fn.now(),
      })
      .returning('*');
    if (!row) throw new NotFoundError('Mapping', id);
    return row as MappingRow;
  }

  /** Approves the listed mappings, or all of the session's; answers the rows now approved. */
  async approve(trx: Knex, sessionId: string, ids: string[] | null, by: string | null): Promise<MappingRow[]> {
    const q = trx('review_mappings').where({ session_id: sessionId });
    if (ids) q.whereIn('id', ids.filter(isUuid));
    return (await q.update({ approved: true, approved_by: by, approved_at: trx.fn.now() }).returning('*')) as MappingRow[];
  }

  async setVariable(
    trx: Knex,
    sessionId: string,
    filterId: string,
    variable: string | null,
    kind: VariableKind | null,
    by: string | null,
  ): Promise<void> {
    await trx('review_mappings')
      .where({ session_id: sessionId, filter_id: filterId })
      .update({ variable, variable_kind: kind, origin: 'manual', approved: false, updated_by: by, updated_at: trx.fn.now() });
  }
}
