import { ADMIN_ROLE_NAME, holds, keyPermissions } from '../../contracts/permissions.ts';
import type { ScheduleRow } from '../../db/schedules/store.ts';
import type { ActivityDeps } from '../deps.ts';

/**
 * Why a schedule may not run now, or null: each run has the rights its creator has at that
 * moment (and, made with an API key, only those the key still grants). The one decider for runs.
 */
export async function runRefusal(
  deps: Pick<ActivityDeps, 'stores'>,
  schedule: ScheduleRow,
  permission: string,
  taskType: string,
): Promise<string | null> {
  const { access } = deps.stores.identity;
  const who = `${schedule.created_by_username ?? 'the creator'} (who made schedule '${schedule.name}')`;
  if (!schedule.created_by)
    return `schedule '${schedule.name}' has no person behind it (made with an API key before keys acted for their creators): make it again`;
  const person = await access.ofUser(schedule.created_by);
  if (!person) return `${who} was deleted; nothing was run`;
  if (!person.active) return `${who} is deactivated; nothing was run`;
  let held = permission === 'admin' ? person.roles.includes(ADMIN_ROLE_NAME) : holds(person, permission);
  if (held && schedule.created_by_api_key_id) {
    const key = await access.ofApiKey(schedule.created_by_api_key_id);
    if (!key || !key.usable || key.user_id !== schedule.created_by)
      return `the API key schedule '${schedule.name}' was made with is revoked or expired; nothing was run`;
    held = keyPermissions(key.permissions, person).includes(permission);
  }
  if (!held) return `${who} may no longer start ${taskType} tasks (${permission}); nothing was run`;
  return null;
}
