/**
 * Who may do what with a task, in one place (as Backstage's authorized service wrappers keep
 * resource rules beside the resource): the permission a rule needs, or the task being one's own.
 *
 * Two notions of "one's own", on purpose:
 * - requested: the person who asked for the task, signed in or through one of their API keys
 *   (a key acts for its creator). Approvals compare this: nobody decides on their own request.
 * - personal: the same person signed in. A key reaches nothing beyond its permissions, so without
 *   `tasks:READ` it sees no task, not even its creator's.
 */
import type { TaskRecord } from '../../db/tasks/store.ts';
import { can, isAdmin, personalUserId, type Principal } from '../auth/principal.ts';

type Owned = Pick<TaskRecord, 'owner_id'>;

/** The caller is the person who requested the task (signed in or by one of their keys). */
export function requested(principal: Principal, task: Owned): boolean {
  return task.owner_id !== null && task.owner_id === principal.userId;
}

/** The caller is that person signed in. */
function personal(principal: Principal, task: Owned): boolean {
  const own = personalUserId(principal);
  return own !== null && task.owner_id === own;
}

/**
 * What the environment's service account saw for a task, which Superset's row-level security and
 * dashboard roles of the reader never filtered: its requester's and the admins' (signed in) only.
 */
function seesServiceAccountView(principal: Principal, task: Owned): boolean {
  return isAdmin(principal) || requested(principal, task);
}

export const taskPolicy = {
  /** Read a task, its logs and report: `tasks:READ`, or one's own (signed in). A hidden task answers 404. */
  read: (principal: Principal, task: Owned) => can(principal, 'tasks:READ') || personal(principal, task),
  /** Which tasks a list shows: all with `tasks:READ`, else one's own (none for a key). */
  listOwner: (principal: Principal): { all: true } | { ownerId: string | null } =>
    can(principal, 'tasks:READ') ? { all: true } : { ownerId: personalUserId(principal) },
  /** Cancel: `tasks:WRITE`, or one's own (signed in). */
  cancel: (principal: Principal, task: Owned) => can(principal, 'tasks:WRITE') || personal(principal, task),
  /** See the rows a caller's SQL query brought into the task: its requester and admins only. */
  seeQueryRows: seesServiceAccountView,
  /** See a browser check's screenshots (dashboards drawn as the service account, data included): the same. */
  seeScreenshots: seesServiceAccountView,
  /** Approve or reject: never the requester (the permissions are the approval route's). */
  decide: (principal: Principal, task: Owned) => !requested(principal, task),
};
