/** A task's status and logs: read-only, for a task the caller may see (their own, or any with tasks:READ). */
import type { Language, ParseResult } from '../../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../../lib/assistant/operation-texts.ts';
import { taskRefOf } from '../../../lib/assistant/task-ref.ts';
import { verificationSummaryText } from '../../../lib/assistant/verification-texts.ts';
import { ambiguousText, notFoundText, TEXTS } from '../../../lib/assistant/texts.ts';
import { NotFoundError } from '../../../lib/errors.ts';
import { isItemsResult } from '../../../contracts/outcomes.ts';
import type { Principal } from '../../auth/principal.ts';
import type { AppContext } from '../../context.ts';
import { hidesQueryRows } from '../../tasks/query-rows.ts';
import { toTaskView } from '../../tasks/schemas.ts';
import { Clarification } from '../resolve.ts';
import { anyone, defineOperation, type OperationContext, type Plan } from './types.ts';

const LOG_LINES = 50;
/** Candidates named when a short id fits several tasks. */
const MAX_CANDIDATES = 10;

/** The task named by id or by the start of one, or the caller's latest; one the caller may not see reads as unknown. */
async function findTask(app: AppContext, principal: Principal, lang: Language, id: string | undefined, latest: boolean) {
  if (latest && !id) {
    const page = await app.tasks.list({ owner: principal.userId ?? principal.username }, 1, 1, principal);
    const task = page.items[0];
    if (!task) throw new Clarification(OPERATION_TEXTS.noTasks[lang](), { not_found: 'task' });
    return task;
  }
  const ref = taskRefOf(id!);
  if (ref?.kind === 'prefix') return byPrefix(app, principal, lang, id!, ref);
  try {
    return await app.tasks.getVisible(id!, principal);
  } catch (err) {
    if (err instanceof NotFoundError) throw new Clarification(notFoundText(lang, 'task', id!), { not_found: 'task', mention: id });
    throw err;
  }
}

/**
 * A short id ("7f1c2a"), looked up among the tasks the caller may see (so the candidates never
 * name anyone else's): one fits, it is the task; several, the question names them (the reply,
 * a longer start or the whole id, completes the command); none, the answer says so.
 */
async function byPrefix(app: AppContext, principal: Principal, lang: Language, mention: string, ref: { type?: string; prefix: string }) {
  const found = await app.tasks.list({ idPrefix: ref }, 1, MAX_CANDIDATES + 1, principal);
  if (found.items.length === 1) return found.items[0]!;
  if (!found.items.length) throw new Clarification(TEXTS.noTaskWithPrefix[lang](mention), { not_found: 'task', mention });
  const candidates = found.items
    .slice(0, MAX_CANDIDATES)
    .map((t) => ({ id: t.id, summary: t.summary, status: t.status, created_at: t.created_at }));
  throw new Clarification(
    ambiguousText(
      lang,
      'task',
      mention,
      candidates.map((c) => `${c.id} (${c.summary}, ${c.status})`),
    ),
    { ambiguous: 'task', mention, candidates, total: found.total },
  );
}

async function status({ app, principal }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const task = await findTask(app, principal, lang, intent.entities.task_id, intent.entities.latest === true);
  const view = toTaskView(task, app.tasks.temporalUiUrl(task.id));
  const progress =
    task.progress && typeof task.progress === 'object' && 'message' in task.progress
      ? String((task.progress as { message?: unknown }).message)
      : undefined;
  // A migration's dashboards: what it verified, what it carried (./verification-texts.ts).
  const items = task.type === 'migration' && isItemsResult(task.result) ? task.result.items : [];
  const verification = verificationSummaryText(lang, items);
  return {
    kind: 'read',
    text: [OPERATION_TEXTS.taskStatus[lang](task.id, task.summary, task.status, progress), ...(verification ? [verification] : [])].join(
      '\n',
    ),
    data: { task: view },
    outcome: { task_id: task.id, status: task.status },
  };
}

async function logs({ app, principal }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const task = await findTask(app, principal, lang, intent.entities.task_id, intent.entities.latest === true);
  const read = await app.taskLogs.read(task.id, { limit: LOG_LINES, conceal: hidesQueryRows(task, principal) });
  const lines = read.items
    .slice(-10)
    .map((l) =>
      `${String((l as { ts?: unknown }).ts ?? '')} ${(l as { level?: string }).level ?? ''} ${(l as { message?: string }).message ?? ''}`.trim(),
    );
  return {
    kind: 'read',
    text: [OPERATION_TEXTS.taskLogs[lang](task.id, task.status), ...lines].join('\n'),
    data: { task_id: task.id, items: read.items, has_more: read.has_more },
    outcome: { task_id: task.id, lines: read.items.length },
  };
}

// Whether the caller may see the task is the task policy's (getVisible, list): a task not theirs reads as unknown.
export const taskStatus = defineOperation('tasks.status', { access: anyone, plan: status });
export const taskLogs = defineOperation('tasks.logs', { access: anyone, plan: logs });
