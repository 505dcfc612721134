/**
 * Who may see rows of a dataset's data that Switchyard read through SQL Lab as the environment's
 * service account (a dataset review's preview): a holder of `datasets:READ`. Superset's own
 * row-level security of the person does not apply to the service account, so this is the rule.
 * Permissions are not held per environment yet; when they are, this is the one place to ask.
 */
import { can, type Principal } from '../auth/principal.ts';

export function maySeeDatasetRows(principal: Principal, _envId: string): boolean {
  return can(principal, 'datasets:READ');
}
