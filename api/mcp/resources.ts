/**
 * Task logs and reports as MCP resources, read through the same routes as the console's
 * (`GET /api/tasks/{id}/logs`, `GET /api/tasks/{id}`), so who may read which task is the task
 * policy's decision and a report's items are bounded by the task-answer rule.
 */
import { ErrorCode, McpError, type ReadResourceResult, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal.ts';
import type { Dispatcher } from './dispatch.ts';
import { DATA_NOTICE, MAX_ANSWER_CHARS, redactAnswer } from './limits.ts';

const URI = /^switchyard:\/\/tasks\/([0-9A-Za-z_-]{1,100})\/(logs|report)$/;
const LISTED_TASKS = 20;

export const TASK_RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: 'switchyard://tasks/{task_id}/logs',
    name: 'task-logs',
    title: "A task's logs",
    description: 'The first 500 log lines of a task, oldest first (tasks_logs pages further).',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'switchyard://tasks/{task_id}/report',
    name: 'task-report',
    title: "A task's report",
    description: "A task's status, progress and result, items bounded as in its API answer.",
    mimeType: 'application/json',
  },
];

export async function listTaskResources(dispatcher: Dispatcher, principal: Principal) {
  const r = await dispatcher.dispatch({ principal, method: 'GET', url: `/api/tasks?page_size=${LISTED_TASKS}` });
  const tasks = r.status === 200 ? ((r.body as { items?: Array<{ id: string; type?: string; status?: string }> }).items ?? []) : [];
  return {
    resources: tasks.flatMap((t) => [
      {
        uri: `switchyard://tasks/${t.id}/logs`,
        name: `task-${t.id}-logs`,
        title: `Logs of ${t.type ?? 'task'} ${t.id} (${t.status ?? ''})`,
        mimeType: 'application/json',
      },
      {
        uri: `switchyard://tasks/${t.id}/report`,
        name: `task-${t.id}-report`,
        title: `Report of ${t.type ?? 'task'} ${t.id} (${t.status ?? ''})`,
        mimeType: 'application/json',
      },
    ]),
  };
}

export async function readTaskResource(dispatcher: Dispatcher, principal: Principal, uri: string): Promise<ReadResourceResult> {
  const m = URI.exec(uri);
  if (!m) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri.slice(0, 200)}`);
  const [, id, what] = m;
  const url = what === 'logs' ? `/api/tasks/${id}/logs?limit=500` : `/api/tasks/${id}`;
  const r = await dispatcher.dispatch({ principal, method: 'GET', url });
  if (r.status === 404 || r.status === 403) throw new McpError(ErrorCode.InvalidParams, `No such task: ${id}`);
  if (r.status >= 400) throw new McpError(ErrorCode.InternalError, `Reading ${uri} failed with ${r.status}`);
  const text = JSON.stringify(redactAnswer(r.body));
  if (text.length > MAX_ANSWER_CHARS)
    throw new McpError(ErrorCode.InvalidRequest, `${uri} is too large; page it with tasks_logs or tasks_items`);
  return {
    contents: [{ uri, mimeType: 'application/json', text }],
    _meta: { 'switchyard/content': 'data', 'switchyard/notice': DATA_NOTICE },
  };
}
