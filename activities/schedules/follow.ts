import { Context } from '@temporalio/activity';
import { TERMINAL_STATUSES, type TaskStatus } from '../../contracts/tasks.ts';
import type { ActivityDeps } from '../deps.ts';
import { upstreamFor } from '../../domain/migration/index.ts';

/** Follows a task started around this run (by the reconciler) to its end. */
export async function awaitTaskEnd(deps: Pick<ActivityDeps, 'stores'>, input: { taskId: string }): Promise<TaskStatus> {
  for (;;) {
    const task = await deps.stores.tasks.get(input.taskId);
    if (!task) return 'FAILED';
    if (TERMINAL_STATUSES.includes(task.status)) return task.status;
    Context.current().heartbeat();
    await Context.current().sleep(2000);
  }
}

/** Source dashboards the target holds (same UUID): what a drift report compares. */
export async function driftCandidates(deps: ActivityDeps, input: { sourceEnvId: string; targetEnvId: string }): Promise<number[]> {
  const source = await upstreamFor(deps, input.sourceEnvId);
  const target = await upstreamFor(deps, input.targetEnvId);
  const targetUuids = new Set(
    (await target.listRows('dashboard', ['id', 'uuid'])).map((r) => (typeof r.uuid === 'string' ? r.uuid : null)).filter(Boolean),
  );
  const ids: number[] = [];
  for (const row of await source.listRows('dashboard', ['id', 'uuid'])) {
    let uuid = typeof row.uuid === 'string' ? row.uuid : null;
    // Releases whose lists carry no uuid answer it on the detail path.
    if (!uuid) uuid = (await source.findDashboard(String(row.id)))?.uuid ?? null;
    if (uuid && (targetUuids.has(uuid) || (targetUuids.size === 0 && (await target.findDashboard(uuid))))) ids.push(row.id);
    Context.current().heartbeat();
  }
  return ids.sort((a, b) => a - b);
}
