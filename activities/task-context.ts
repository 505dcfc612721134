import { Context } from '@temporalio/activity';

/** The task id is the workflow id; activities here always run inside a workflow. */
export function currentTaskId(): string {
  const id = Context.current().info.workflowExecution?.workflowId;
  if (!id) throw new Error('activity is not running inside a task workflow');
  return id;
}

export function currentRunId(): string {
  return Context.current().info.workflowExecution?.runId ?? '';
}
