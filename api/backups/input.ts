/** The backup task input, built in one place for the HTTP route and the assistant. */
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import type { backupBody } from './schemas.ts';
import type { z } from 'zod';

export type BackupBody = z.output<typeof backupBody>;

export function backupInput(body: BackupBody): { input: TaskInputOf<'backup'>; params: Record<string, unknown> } {
  return { input: { envId: body.env_id, dashboardIds: body.dashboard_ids }, params: { ...body } };
}
