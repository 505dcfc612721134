/** The bound dataset review session: show it (read-only), or plan a write at the version shown. */
import type { Entities, Language, ParseResult } from '../../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../../lib/assistant/operation-texts.ts';
import type { BoundReviewSession } from '../binder.ts';
import { planAnswer, planApproveMappings, planSetField, showSession } from '../review.ts';
import { defineOperation, needs, type OperationContext, type Plan } from './types.ts';

/** A review command needs the message bound to a session: without one, it says so (and keeps nothing to complete). */
const onSession =
  (plan: (lang: Language, s: BoundReviewSession, e: Entities) => Plan) =>
  async ({ session }: OperationContext, { language, intent }: ParseResult): Promise<Plan> =>
    session
      ? plan(language, session, intent.entities)
      : { kind: 'ask', text: OPERATION_TEXTS.needsSession[language](), data: { missing: ['dataset_review_session_id'] } };

export const reviewShow = defineOperation('dataset_review.show', { access: needs('dataset_review:READ'), plan: onSession(showSession) });
export const reviewSetField = defineOperation('dataset_review.set_field', {
  access: needs('dataset_review:WRITE'),
  plan: onSession(planSetField),
});
export const reviewApproveMappings = defineOperation('dataset_review.approve_mappings', {
  access: needs('dataset_review:WRITE'),
  plan: onSession(planApproveMappings),
});
export const reviewAnswer = defineOperation('dataset_review.answer', {
  access: needs('dataset_review:WRITE'),
  plan: onSession(planAnswer),
});
