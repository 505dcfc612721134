/**
 * Progress of a long tool: the task id at once (the first notification names it), then one
 * notification each time the task's status or progress changes, read from the task as its
 * route answers it, until the task ends, the client gives up on the call, or FOLLOW_MS passes
 * (the result then carries the task as it stands; tasks_get and the logs resource go on).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { TERMINAL_STATUSES } from '../../contracts/tasks.ts';
import type { Principal } from '../auth/principal.ts';
import type { Dispatcher } from './dispatch.ts';

export const FOLLOW_MS = 10 * 60_000;
const POLL_MS = 1_000;

export interface ProgressSink {
  token: string | number;
  send(n: ServerNotification): Promise<void>;
  signal: AbortSignal;
}

interface TaskView {
  id: string;
  status: string;
  progress?: { done: number; total: number; message?: string } | null;
}

export async function followTask(dispatcher: Dispatcher, principal: Principal, taskId: string, sink: ProgressSink): Promise<unknown> {
  let sent = 0;
  let last = '';
  // `progress` counts the notifications (it must grow); the task's own done/total is in the message.
  const notify = (message: string) =>
    sink.send({ method: 'notifications/progress', params: { progressToken: sink.token, progress: ++sent, message } });
  await notify(`task ${taskId} accepted`);
  const deadline = Date.now() + FOLLOW_MS;
  let view: TaskView | undefined;
  while (!sink.signal.aborted) {
    const r = await dispatcher.dispatch({ principal, method: 'GET', url: `/api/tasks/${encodeURIComponent(taskId)}` });
    if (r.status !== 200) return r.body;
    view = r.body as TaskView;
    const p = view.progress;
    const now = `${view.status} ${p ? `${p.done}/${p.total} ${p.message ?? ''}` : ''}`.trim();
    if (now !== last) await notify(`task ${taskId}: ${(last = now)}`);
    if ((TERMINAL_STATUSES as readonly string[]).includes(view.status) || Date.now() > deadline) break;
    try {
      await sleep(POLL_MS, undefined, { signal: sink.signal });
    } catch (err) {
      if (!sink.signal.aborted) throw err;
    }
  }
  return view;
}
