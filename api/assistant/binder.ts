import type { Principal } from '../auth/principal.ts';

/**
 * How a message is bound to a dataset review session. Dataset review provides it (wired in
 * bootstrap as `AppContext.assistantReviewSessions`); until then a bound message answers 404.
 */
export interface ReviewSessionBinder {
  /**
   * The caller's own active session, as the assistant may see it (imported filters' raw values
   * masked), or undefined when it is unknown, not the caller's, or closed.
   */
  load(sessionId: string, principal: Principal): Promise<BoundReviewSession | undefined>;
}

export interface BoundReviewSession {
  id: string;
  /** The session version a dataset-review write must carry. */
  version: number;
  /** Assistant-visible metadata (no raw filter values). */
  metadata: Record<string, unknown>;
}
