/**
 * What an answer to a review's current question changes (but a dataset choice, which recovers the
 * session anew): the variable a filter fills, a field's pending dictionary candidate taken or
 * dropped, or the meaning a person gives an unresolved field. Runs in the answer's transaction.
 */
import type { ReviewFieldStore } from '../../db/dataset-review/fields.ts';
import type { ReviewMappingStore } from '../../db/dataset-review/mappings.ts';
import type { SessionRow } from '../../db/dataset-review/sessions.ts';
import type { Transaction } from '../../db/stores.ts';
import type { VariableKind } from '../../lib/dataset-review/jinja.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { actor } from './answers.ts';
import type { Question } from './clarification.ts';

export type Answer = { option: string; label?: string | null; description?: string | null };

export async function applyAnswer(
  stores: { fields: ReviewFieldStore; mappings: ReviewMappingStore },
  trx: Transaction,
  p: Principal,
  s: SessionRow,
  current: Question,
  answer: Answer,
): Promise<void> {
  const { fields, mappings } = stores;
  const id = s.id;
  const option = answer.option;
  if (current.kind === 'filter_mapping' && option !== 'none') {
    const [kind, ...rest] = option.split(':');
    const f = s.imported_filters.find((x) => `filter_mapping:${x.id}` === current.key)!;
    await mappings.setVariable(trx, id, f.id, rest.join(':'), kind as VariableKind, p.userId);
  } else if (current.kind === 'field_review') {
    await reviewField(fields, trx, p, id, current.ref!, option);
  } else if (current.kind === 'field_meaning' && option === 'set') {
    if (!answer.label && !answer.description) {
      throw new ValidationError('answer.label or answer.description is needed to set a meaning', [
        { field: 'body.answer', message: 'label or description required' },
      ]);
    }
    await fields.update(
      trx,
      id,
      current.ref!,
      {
        label: answer.label ?? null,
        description: answer.description ?? null,
        provenance: 'manual',
        status: 'manual',
        locked: true,
        source: { set_by: p.username, set_at: new Date().toISOString(), via: 'clarification' },
      },
      actor(p),
    );
  }
}

/** A field's review answered: its pending candidate accepted, or dismissed (proposed again, or unresolved when nothing resolved it). */
async function reviewField(
  fields: ReviewFieldStore,
  trx: Transaction,
  p: Principal,
  id: string,
  ref: string,
  option: string,
): Promise<void> {
  const f = await fields.get(id, ref, trx);
  const c = f.pending_candidate;
  if (option === 'accept_candidate' && c) {
    await fields.update(
      trx,
      id,
      f.id,
      {
        label: c.label,
        description: c.description,
        provenance: c.provenance,
        status: 'proposed',
        pending_candidate: null,
        source: { ...c.source, score: c.score },
      },
      actor(p),
    );
  } else {
    await fields.update(
      trx,
      id,
      f.id,
      { status: f.provenance === 'unresolved' ? 'unresolved' : 'proposed', pending_candidate: null },
      actor(p),
    );
  }
}
