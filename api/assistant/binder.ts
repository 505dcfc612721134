import type { Principal } from '../auth/principal.ts';

/**
 * How a message is bound to a dataset review session, and the review writes the assistant may
 * carry out. Dataset review provides it (`api/dataset-review/assistant-binder.ts`, wired in
 * bootstrap as `AppContext.assistantReviewSessions`); without it a bound message answers 404.
 */
export interface ReviewSessionBinder {
  /**
   * The caller's own session, as the assistant may see it (imported filters' values masked), or
   * undefined when it is unknown or not the caller's: someone else's session is never read.
   */
  load(sessionId: string, principal: Principal): Promise<BoundReviewSession | undefined>;
  /** A field's meaning by hand (manual, locked), at `version`: 409 `version_conflict` when stale. */
  setField(
    principal: Principal,
    sessionId: string,
    version: number,
    fieldId: string,
    change: { label?: string | null; description?: string | null },
  ): Promise<{ version: number }>;
  /** Approves every mapping of the session, at `version`. */
  approveMappings(principal: Principal, sessionId: string, version: number): Promise<{ version: number }>;
  /** Answers the current question, at `version`. */
  answer(
    principal: Principal,
    sessionId: string,
    version: number,
    questionKey: string,
    answer: { option: string; label?: string | null },
  ): Promise<{ version: number }>;
}

export interface BoundField {
  id: string;
  kind: 'column' | 'metric';
  name: string;
  label: string | null;
  description: string | null;
  status: string;
  locked: boolean;
}

export interface BoundMapping {
  id: string;
  filter_id: string;
  filter_name: string | null;
  variable: string | null;
  approved: boolean;
  /** A manual value, masked like the imported ones. */
  value: unknown;
}

export interface BoundQuestion {
  key: string;
  kind: string;
  text: string;
  options: Array<{ value: string; label: string }>;
}

export interface BoundReviewSession {
  id: string;
  /** The session version a dataset-review write must carry. */
  version: number;
  state: string;
  title: string | null;
  dataset: { id: number; table_name: string } | null;
  fields: BoundField[];
  mappings: BoundMapping[];
  question: BoundQuestion | null;
  /** Assistant-visible metadata (no raw filter values, no previewed SQL or rows). */
  metadata: Record<string, unknown>;
}
