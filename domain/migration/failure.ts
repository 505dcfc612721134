import type { DashboardOutcome } from '../../contracts/migration.ts';
import { classifySupersetFailure } from '../../lib/superset/errors.ts';
import { itemFailure } from '../failures/index.ts';
import { outcomeBase } from './apply.ts';
import type { Log, Request } from './context.ts';
import { diagnoseImportFailure } from './diagnose.ts';
import type { PreparedBundle } from './plan.ts';
import { failedStep } from './step.ts';
import type { TargetIndex } from './target-index.ts';

/**
 * A dashboard's failure at the step it reached (the step `err` was thrown in, see ./step.ts;
 * `fallback` outside any), with what Superset said. An outage, or an error nobody classified, is
 * thrown as it was thrown, for Temporal's retry (the one classification: ../failures/item-failure.ts).
 * A bare 500 on an import is diagnosed against the target's index when the plan is at hand.
 */
export async function failedOutcome(
  scope: { input: Request; log: Log },
  dashboardId: number,
  err: unknown,
  at: { fallback: string; index?: TargetIndex; prepared?: PreparedBundle },
): Promise<DashboardOutcome> {
  const { input, log } = scope;
  const { index, prepared } = at;
  const { step, env, error } = failedStep(err, at.fallback);
  const envId = env ?? (step === 'export' ? input.sourceEnvId : input.targetEnvId);
  const failure = itemFailure(error, { step, item: `dashboard ${dashboardId}`, envId });
  if (step === 'import' && index && prepared && classifySupersetFailure(error)?.reason === 'server_error') {
    const known = await diagnoseImportFailure(index, prepared, { ...input, dashboardId }).catch((err: unknown) => {
      log.warn(
        `dashboard ${dashboardId}: the import's failure could not be diagnosed (${(err as Error).message}): Superset's own answer is reported`,
      );
      return undefined;
    });
    if (known) {
      failure.error = `Superset failed to import dashboard '${prepared.title}': ${known.error}`;
      failure.next_actions = [...known.next_actions, ...failure.next_actions];
    }
  }
  log.error(`dashboard ${dashboardId}${prepared ? ` ('${prepared.title}')` : ''} failed at ${step}: ${failure.error}`);
  return { ...outcomeBase(dashboardId, prepared), status: 'failed', ...failure };
}
