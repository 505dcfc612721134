/**
 * Dataset review as the assistant sees it: only the caller's own session, with imported filters'
 * values (raw and normalised) and manual mapping values masked, and no previewed SQL or rows
 * (they carry the filter values). Writes go through the review service with the version the
 * assistant showed, so a session changed since answers 409 `version_conflict`.
 */
import { loadOwnedSessionForAssistant, maskFilterValues } from '../../db/dataset-review/sessions.ts';
import type { Principal } from '../auth/principal.ts';
import type { BoundReviewSession, ReviewSessionBinder } from '../assistant/binder.ts';
import { questions } from './clarification.ts';
import { reviewPolicy } from './policy.ts';
import type { ReviewService } from './service.ts';

export function createReviewSessionBinder(review: ReviewService): ReviewSessionBinder {
  return {
    async load(sessionId: string, principal: Principal): Promise<BoundReviewSession | undefined> {
      const scope = reviewPolicy.scope(principal);
      const s = scope ? await loadOwnedSessionForAssistant(review.sessions, sessionId, scope) : undefined;
      if (!s) return undefined;
      const [fields, mappings, answered] = [
        await review.fields.list(s.id),
        await review.mappings.list(s.id),
        await review.clarifications.list(s.id),
      ];
      const open = questions(s, fields, mappings, answered);
      const q = open[0];
      const bound = boundOf(s, fields, mappings, q);
      bound.metadata = metadataOf(s, bound, open.length);
      return bound;
    },

    async setField(principal, sessionId, version, fieldId, change) {
      const r = await review.overrideField(principal, sessionId, fieldId, { version, ...change });
      return { version: r.version };
    },

    async approveMappings(principal, sessionId, version) {
      const r = await review.approveMappings(principal, sessionId, { version });
      return { version: r.version };
    },

    async answer(principal, sessionId, version, questionKey, answer) {
      const r = await review.answer(principal, sessionId, { version, question_key: questionKey, answer });
      return { version: r.version };
    },
  };
}

type Session = NonNullable<Awaited<ReturnType<typeof loadOwnedSessionForAssistant>>>;
type Fields = Awaited<ReturnType<ReviewService['fields']['list']>>;
type Mappings = Awaited<ReturnType<ReviewService['mappings']['list']>>;
type Question = ReturnType<typeof questions>[number];

/** The session as the assistant holds it: fields, mappings with their values masked, the question asked now. */
function boundOf(s: Session, fields: Fields, mappings: Mappings, q: Question | undefined): BoundReviewSession {
  const filterName = new Map(s.imported_filters.map((f) => [f.id, f.name]));
  return {
    id: s.id,
    version: s.version,
    state: s.state,
    title: s.title,
    dataset: s.dataset ? { id: s.dataset.id, table_name: s.dataset.table_name } : null,
    fields: fields.map((f) => ({
      id: f.id,
      kind: f.kind,
      name: f.name,
      label: f.label,
      description: f.description,
      status: f.status,
      locked: f.locked,
    })),
    mappings: mappings.map((m) => ({
      id: m.id,
      filter_id: m.filter_id,
      filter_name: filterName.get(m.filter_id) ?? null,
      variable: m.variable,
      approved: m.approved,
      value: m.value === null || m.value === undefined ? null : '***',
    })),
    question: q ? { key: q.key, kind: q.kind, text: q.text, options: q.options } : null,
    metadata: {},
  };
}

/** What the assistant's answers carry of the session: imported filters' values masked, the preview without its SQL or rows. */
function metadataOf(s: Session, bound: BoundReviewSession, remainingQuestions: number): BoundReviewSession['metadata'] {
  const preview = s.preview as { status?: unknown; row_count?: unknown; at_version?: unknown } | null;
  return {
    state: s.state,
    title: s.title,
    env_id: s.env_id,
    dashboard: s.dashboard ? { id: s.dashboard.id, title: s.dashboard.title } : null,
    dataset: bound.dataset,
    imported_filters: s.imported_filters.map((f) => {
      const masked = maskFilterValues(f);
      return {
        id: f.id,
        name: f.name,
        column: f.column,
        raw_value: masked.raw_value,
        normalized: masked.normalized,
        value_source: f.value_source,
      };
    }),
    recovery_markers: s.recovery_markers.map((m) => ({ kind: m.kind, ref: m.ref })),
    open_question: bound.question,
    remaining_questions: remainingQuestions,
    unresolved_fields: bound.fields.filter((f) => f.status === 'unresolved' || f.status === 'needs_review').map((f) => f.name),
    fields: bound.fields,
    mappings: bound.mappings,
    preview: preview
      ? { status: preview.status ?? null, row_count: preview.row_count ?? null, at_version: preview.at_version ?? null }
      : null,
  };
}
