/**
 * The assistant's confirmations: what confirming does (the planned action, typed per task kind),
 * and the workflow that is the confirmation's timer (its name, signal and input: ids and a time,
 * never a secret).
 */
import type { TaskInputOf } from './task-kinds.ts';

export const ASSISTANT_CONFIRMATION_WORKFLOW = 'assistantConfirmationWorkflow';

export type ConfirmationState = 'pending' | 'confirmed' | 'cancelled' | 'expired';

export interface AssistantConfirmationInput {
  confirmationId: string;
  /** ISO-8601; the workflow's timer asks the row then. */
  expiresAt: string;
}

export interface AssistantConfirmationResult {
  state: Exclude<ConfirmationState, 'pending'>;
}

export const confirmationWorkflowId = (confirmationId: string) => `assistant-confirmation-${confirmationId}`;

/** The task kinds the assistant plans, each built by its route's own input builder. */
export type AssistantTaskKind = 'migration' | 'backup' | 'llm_docs' | 'git_deploy' | 'validate';

/** A task of one kind, with the input and request parameters the direct route would give it. */
export type TaskAction<K extends AssistantTaskKind = AssistantTaskKind> = {
  [P in K]: { type: 'task'; kind: P; input: TaskInputOf<P>; params: Record<string, unknown> };
}[K];

export interface GitCommitAction {
  type: 'git_commit';
  envId: string;
  dashboardId: number;
  message: string;
}

interface ReviewWrite {
  type: 'dataset_review';
  sessionId: string;
  /** The session version shown when it was asked: a session changed since answers 409 at confirm. */
  version: number;
}

export type DatasetReviewAction =
  | (ReviewWrite & { op: 'set_field'; fieldId: string; label: string })
  | (ReviewWrite & { op: 'approve_mappings' })
  | (ReviewWrite & { op: 'answer'; questionKey: string; option: string; label?: string });

/**
 * A risky MCP tool call an agent asked for (api/mcp): the route's request as the tool built it,
 * carried out in-process as the person who confirms, naming the agent's client. Tool inputs
 * never carry a secret (a route whose body takes one is no tool).
 */
export interface McpCallAction {
  type: 'mcp_call';
  tool: string;
  method: string;
  url: string;
  body?: unknown;
  /** The MCP client's name (clientInfo), for the task log and the audit. */
  agent: string;
}

/** What confirming does: a task, a git commit, a dataset review write, or an agent's MCP call. Ids only, never a secret. */
/** A pull request opened from the repository's current branch (api/git/pull-requests.ts), its preview a task. */
export interface GitPullRequestAction {
  type: 'git_pull_request';
  envId: string;
  dashboardId: number;
  targetEnvId: string;
  branch: string;
  title: string;
  /** Where the pull request's links point: the Switchyard the command came to. */
  linkBase: string;
}

export type PlannedAction = TaskAction | GitCommitAction | GitPullRequestAction | DatasetReviewAction | McpCallAction;
