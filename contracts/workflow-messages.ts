/**
 * The updates, signals and queries the API sends and the workflows answer, each defined once with
 * its types (as the Temporal samples' shared.ts does): the workflows `setHandler` on these objects
 * and the API passes the same objects to `executeUpdate`/`signal`, so neither restates a name or
 * a generic. The define* functions only build `{ type, name }`, so importing them outside the
 * sandbox is safe; the console does not import this module, which keeps the SDK out of its bundle.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ReleaseDecision, ReleaseDecisionOutcome } from './clean-release.ts';
import type { ApprovalDecision } from './tasks.ts';

/** An approver's decision, sent to a task waiting in its approval gate (every gated task kind answers it). */
export const decideApprovalUpdate = defineUpdate<{ decision: ApprovalDecision['decision']; status: string }, [ApprovalDecision]>(
  'decideApproval',
);

/** A release candidate's decisions (approve, reject, publish, revoke), sent to its release workflow. */
export const releaseDecisionUpdate = defineUpdate<ReleaseDecisionOutcome, [ReleaseDecision]>('releaseDecision');
/** The decisions a release workflow has applied so far. */
export const releaseDecisionsQuery = defineQuery<ReleaseDecisionOutcome[]>('releaseDecisions');

/** Sent once an assistant confirmation's row has left `pending`: its timer workflow asks the row and ends. */
export const confirmationDecidedSignal = defineSignal('decided');
