import { ApplicationFailure } from '@temporalio/activity';
import type { CandidateState, ReleaseDecision, ReleaseDecisionOutcome, ReleasePublishInput } from '../../contracts/clean-release.ts';
import { releaseWorkflowId } from '../../contracts/clean-release.ts';
import { approvalFor, TASK_KINDS } from '../../contracts/task-kinds.ts';
import { selfApprovalRefusal, type CandidateRow, type DecisionRow } from '../../db/clean-release/store.ts';
import { AppError } from '../../lib/errors.ts';
import type { ActivityDeps } from '../deps.ts';

type DecisionInput = ReleaseDecision & { candidateId: string; decisionId: string };

/** Which states each decision may leave from, the state it sets, and its name in a refusal. */
const TRANSITIONS: Record<ReleaseDecision['action'], [CandidateState[], CandidateState, string]> = {
  approve: [['checked'], 'approved', 'approval'],
  reject: [['draft', 'prepared', 'blocked', 'checked', 'check_failed', 'approved'], 'rejected', 'rejection'],
  publish: [['approved', 'publish_failed'], 'publishing', 'publishing'],
  revoke: [['published', 'publish_failed'], 'revoking', 'revoking'],
};

/** A refusal the release workflow hands back to the deciding person as the update's failure. */
function refuse(err: AppError): never {
  throw ApplicationFailure.nonRetryable(err.message, err.code, { status: err.status, ...(err.extra ?? {}) });
}

/**
 * One decision on a candidate, applied in the database under a conditional state change and
 * recorded; a publish or revoke also registers its task (run by the release workflow as a child).
 * Idempotent per decision id: a retried activity returns what the first attempt decided.
 */
export async function applyReleaseDecision(
  deps: ActivityDeps,
  input: DecisionInput,
): Promise<ReleaseDecisionOutcome & { publish?: ReleasePublishInput }> {
  const store = deps.stores.cleanRelease;
  const candidate = await store.getCandidate(input.candidateId).catch((e: AppError) => refuse(e));
  const spawns = input.action === 'publish' || input.action === 'revoke';
  const taskId = spawns ? `release_publish-${input.decisionId}` : null;
  const decided =
    (await store.decisions(candidate.id)).find((d) => d.id === input.decisionId) ?? (await decide(deps, candidate, input, taskId));
  // Registered after the decision (a refused one leaves no task behind); idempotent by the decision id.
  const publish = spawns ? await registerPublishTask(deps, candidate, input, taskId!) : undefined;
  return {
    candidate_id: candidate.id,
    decision: input.action,
    state: decided.state_after,
    by: decided.by_username,
    at: decided.at.toISOString(),
    comment: decided.comment,
    ...(taskId ? { task_id: taskId } : {}),
    ...(publish ? { publish } : {}),
  };
}

/** The decision applied and recorded; a refusal (self-approval, no passed report, a state it may not leave) goes back to the person. */
async function decide(
  deps: Pick<ActivityDeps, 'stores'>,
  candidate: CandidateRow,
  input: DecisionInput,
  taskId: string | null,
): Promise<DecisionRow> {
  const store = deps.stores.cleanRelease;
  try {
    if (input.action === 'approve') {
      const refusal = selfApprovalRefusal(candidate, input.userId);
      if (refusal) throw new AppError(403, 'self_approval', 'Forbidden', refusal);
      const report = candidate.report_id ? await store.findReport(candidate.report_id) : undefined;
      if (candidate.state === 'checked' && (!report || report.status !== 'passed' || report.manifest_id !== candidate.manifest_id))
        throw new AppError(
          409,
          'no_passed_report',
          'Conflict',
          'approval needs a passed check report of the current manifest; run the checks',
        );
    }
    const [from, to, operation] = TRANSITIONS[input.action];
    return await store.decide(candidate.id, from, to, operation, {
      id: input.decisionId,
      action: input.action,
      by_id: input.userId,
      by_username: input.username,
      comment: input.comment ?? null,
      task_id: taskId,
    });
  } catch (err) {
    if (err instanceof AppError) refuse(err);
    throw err;
  }
}

/** The publish or revoke task of a decision (the release workflow runs it as a child), and its input. */
async function registerPublishTask(
  deps: ActivityDeps,
  candidate: CandidateRow,
  input: DecisionInput,
  taskId: string,
): Promise<ReleasePublishInput> {
  const store = deps.stores.cleanRelease;
  const mode = input.action === 'publish' ? 'publish' : 'revoke';
  const manifest = candidate.manifest_id ? await store.findManifest(candidate.manifest_id) : undefined;
  const uuids =
    mode === 'publish'
      ? (manifest?.body.artifacts.map((a) => a.dashboard_uuid) ?? [])
      : (await store.publications(candidate.id)).map((p) => p.dashboard_uuid);
  let publish: ReleasePublishInput = { candidateId: candidate.id, mode, targetEnvId: candidate.target_env_id, dashboardUuids: uuids };
  if (mode === 'publish' && input.verification === 'browser') publish = { ...publish, verification: 'browser' };
  const kind = TASK_KINDS.release_publish;
  // Into a protected environment the publish (or revoke) waits for another person, as every writing task does.
  const envs = await deps.stores.environments.labelsById([publish.targetEnvId]);
  const approval = approvalFor(kind, publish, (id) => envs.get(id)?.protected === true, input.userId, deps.config.APPROVAL_TIMEOUT_SECONDS);
  if (approval) publish = { ...publish, approval };
  const { summary, details } = kind.describe(publish, (id) => envs.get(id)?.name ?? id);
  await deps.stores.tasks.create({
    id: taskId,
    type: kind.type,
    ownerId: input.userId,
    ownerUsername: input.username,
    envIds: kind.envIds(publish),
    dashboardIds: kind.dashboardIds(publish),
    params: { candidate_id: candidate.id, mode },
    idempotencyKey: input.decisionId,
    summary,
    details: details ?? null,
    workflowType: kind.workflow,
    workflowInput: publish,
    firstLogLine: `task created by ${input.username ?? 'system'} through release workflow ${releaseWorkflowId(candidate.id)}: ${summary}`,
  });
  return publish;
}
