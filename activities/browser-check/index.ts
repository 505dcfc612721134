/**
 * The browser check's activities (`verification: "browser"`): a migration's imported dashboards
 * after their query verification, and one dashboard of a git deploy or a release publish. One
 * Chromium per worker, at most BROWSER_CHECK_PAGES pages open at once (lib/browser-check/chromium.ts).
 */
import { Context } from '@temporalio/activity';
import type { BrowserCheck } from '../../contracts/browser-check.ts';
import { MIGRATION_OUTCOME, type DashboardOutcome, type VerifyBatchInput } from '../../contracts/migration.ts';
import { chromiumPool, type ChromiumPool } from '../../lib/browser-check/chromium.ts';
import type { ActivityDeps } from '../deps.ts';
import { currentTaskId } from '../task-context.ts';
import { checkDashboard, type BrowserCheckServices } from './check.ts';

export function createBrowserCheckActivities(deps: ActivityDeps, opts: { pool?: ChromiumPool } = {}) {
  const svc: BrowserCheckServices = {
    deps,
    pool: opts.pool ?? chromiumPool({ executablePath: deps.config.BROWSER_CHECK_CHROMIUM, pages: deps.config.BROWSER_CHECK_PAGES }),
  };
  return {
    /**
     * Opens each imported dashboard of a migration's part that passed through query verification
     * and has no browser result yet (a retry skips the done ones), beside its source; amends its
     * outcome: a chart broken in the target only makes it `imported_with_errors`.
     */
    async browserCheckMigratedBatch(
      input: Pick<VerifyBatchInput, 'sourceEnvId' | 'targetEnvId' | 'dashboards'>,
    ): Promise<{ failed: number }> {
      return withHeartbeat(() => checkMigrated(svc, currentTaskId(), input));
    },

    /** One dashboard of a git deploy or a release publish, beside its source when there is one. */
    async browserCheckDashboard(input: {
      targetEnvId: string;
      dashboardId: number;
      source?: { envId: string; dashboardId: number };
    }): Promise<BrowserCheck> {
      return withHeartbeat(() => checkDashboard(svc, { taskId: currentTaskId(), ...input }, Context.current().log));
    },
  };
}

async function checkMigrated(
  svc: BrowserCheckServices,
  taskId: string,
  input: Pick<VerifyBatchInput, 'sourceEnvId' | 'targetEnvId' | 'dashboards'>,
): Promise<{ failed: number }> {
  const { stores } = svc.deps;
  const log = Context.current().log;
  const recorded = await stores.taskItems.getMany<DashboardOutcome>(
    taskId,
    input.dashboards.map((d) => d.position),
  );
  let failed = 0;
  // Each dashboard waits for a page of the pool: never more than BROWSER_CHECK_PAGES open.
  await Promise.all(
    input.dashboards.map(async (d) => {
      const stored = recorded.get(d.position);
      if (!stored?.verification || stored.verification.browser) return;
      const browser = await checkDashboard(
        svc,
        {
          taskId,
          targetEnvId: input.targetEnvId,
          dashboardId: d.targetDashboardId,
          source: { envId: input.sourceEnvId, dashboardId: d.sourceDashboardId },
        },
        log,
      );
      const broken = browser.verdict === 'failed';
      const o: DashboardOutcome = {
        ...stored,
        verification: { ...stored.verification, browser, ...(broken ? { ok: false } : {}) },
        ...(broken
          ? {
              status: d.unchanged ? 'unchanged_with_errors' : 'imported_with_errors',
              step: 'verify',
              error: `${d.unchanged ? 'unchanged' : 'imported'}, but the browser check failed: ${browser.reason}`,
            }
          : {}),
      };
      o.outcome = MIGRATION_OUTCOME[o.status];
      await stores.taskItems.put(taskId, d.position, o.id, o);
      if (broken) {
        failed++;
        // The next run verifies it again instead of calling it unchanged.
        await stores.migrationStates.recordVerification(input.targetEnvId, d.dashboardUuid, false, taskId);
      }
    }),
  );
  return { failed };
}

async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  const beat = setInterval(() => Context.current().heartbeat(), 3000);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}
