/**
 * The one way an item activity (migration, backup, restore) turns a failure into its item's
 * outcome fields: the error in words a person can act on, the step, Superset's own answer and
 * next actions. Whether Temporal retries follows the one classification of Superset failures
 * (lib/superset/errors.ts): only what passes by itself is thrown back for a retry.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_TYPES, type ItemFailure } from '../../contracts/failures.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import { BundleError } from '../../lib/bundles/bundle.ts';
import { AppError } from '../../lib/errors.ts';
import { classifySupersetFailure, type SupersetFailure } from '../../lib/superset/errors.ts';

export interface FailureContext {
  /** The step that failed: export, plan, import, verify, store, ... */
  step: string;
  /** The item as a person names it: "dashboard 12". */
  item: string;
  /** The environment whose Superset the step talked to. */
  envId: string;
  /** Where to list what the environment holds, for a missing item (default: its dashboards). */
  listPath?: string;
}

/**
 * The outcome fields for a failure of one item. Throws instead when the item should not be
 * recorded as failed yet: a transient Superset failure becomes a retryable ApplicationFailure
 * (type `UpstreamUnavailable`, carrying these fields for the workflow), and an error nobody
 * classified (a bug, the database) is rethrown as it is, for Temporal's retries.
 */
export function itemFailure(err: unknown, ctx: FailureContext): ItemFailure {
  const superset = classifySupersetFailure(err);
  if (superset) {
    const fields: ItemFailure = {
      error:
        superset.reason === 'not_found'
          ? `${ctx.item} does not exist in environment ${ctx.envId} (or its service account cannot see it)`
          : (err as Error).message,
      step: ctx.step,
      ...(superset.upstream ? { upstream_error: superset.upstream } : {}),
      next_actions: supersetActions(superset, ctx),
    };
    if (superset.retryable) {
      throw ApplicationFailure.create({ message: fields.error, type: FAILURE_TYPES.unavailable, details: [fields] });
    }
    return fields;
  }
  if (err instanceof BundleError) {
    return {
      error: `the bundle of ${ctx.item} cannot be used: ${err.message}`,
      step: ctx.step,
      next_actions: [
        {
          action: 'inspect_export',
          description:
            err.problem === 'too_large'
              ? `Export ${ctx.item} from Superset by hand and find what makes it this large (charts or datasets it should not carry)`
              : `Export ${ctx.item} from Superset by hand and check that it opens as a dashboard export`,
        },
      ],
    };
  }
  if (err instanceof AppError) {
    // An error that knows what to do about it (a refused path of a repository) says so in `next_actions`.
    const actions = err.extra?.next_actions;
    return { error: err.message, step: ctx.step, next_actions: Array.isArray(actions) ? (actions as NextAction[]) : [] };
  }
  throw err;
}

/** Records the item as failed right away (no retry), when an activity cannot return its outcome. */
export function failItem(fields: ItemFailure): never {
  throw ApplicationFailure.create({ message: fields.error, type: FAILURE_TYPES.itemFailed, nonRetryable: true, details: [fields] });
}

function supersetActions(f: SupersetFailure, ctx: FailureContext): NextAction[] {
  const testEnv: NextAction = {
    action: 'test_environment',
    description: 'Check that Switchyard reaches this Superset and its service account can log in and has the permissions it needs',
    request: { method: 'POST', path: `/api/environments/${ctx.envId}/test`, body: {} },
  };
  switch (f.reason) {
    case 'network':
    case 'timeout':
    case 'bad_response':
      return [testEnv];
    case 'too_large':
      return [
        {
          action: 'inspect_export',
          description: `Superset's answer for ${ctx.item} is larger than Switchyard accepts; check what ${ctx.item} carries`,
        },
      ];
    case 'server_error':
      return [
        {
          action: 'read_superset_log',
          description: `Superset failed on this request (HTTP ${f.upstream?.status ?? 500}); its own log has the cause. Fix it, then retry ${ctx.item}`,
        },
      ];
    case 'not_found':
      return [
        {
          action: 'check_id',
          description: `Superset has no such object (or the service account cannot see it); list what the environment holds to find the right id`,
          request: { method: 'GET', path: ctx.listPath ?? `/api/dashboards?env_id=${ctx.envId}`, body: null },
        },
      ];
    case 'auth_failed':
      return [
        {
          action: 'fix_credentials',
          description: 'Superset refused the service account: set the right username and password on the environment',
          request: { method: 'PUT', path: `/api/environments/${ctx.envId}`, body: { username: '<username>', password: '<password>' } },
        },
        testEnv,
      ];
    case 'forbidden':
      return [
        {
          action: 'grant_permission',
          description: `Give the environment's service account the permission Superset names in upstream_error, then retry ${ctx.item}`,
        },
        testEnv,
      ];
    case 'import_refused':
    case 'refused':
      return [
        {
          action: 'inspect_upstream_error',
          description: `Fix what Superset names in upstream_error, then retry ${ctx.item}`,
        },
      ];
  }
}
