/**
 * One dashboard's browser check: the target's copy (and the source's, when there is one) opened
 * in headless Chromium, each chart's rendered state read, both screenshots stored, and the verdict
 * (contracts/browser-check.ts judgeRendered). It never throws for Superset or Chromium: what keeps
 * a side from being rendered is the check's `not_verifiable` reason.
 */
import type { BrowserCheck, RenderedChart } from '../../contracts/browser-check.ts';
import { judgeRendered } from '../../contracts/browser-check.ts';
import type { ScreenshotSide } from '../../db/browser-check/screenshots.ts';
import type { ChromiumPool } from '../../lib/browser-check/chromium.ts';
import { renderDashboard, type Rendered } from '../../lib/browser-check/render.ts';
import { assertDestinationAllowed, egressPolicy } from '../../lib/egress/policy.ts';
import type { ActivityDeps } from '../deps.ts';

export interface BrowserCheckServices {
  deps: Pick<ActivityDeps, 'stores' | 'keyring' | 'config'>;
  pool: ChromiumPool;
}

export interface BrowserCheckRequest {
  taskId: string;
  targetEnvId: string;
  /** The dashboard's id in the target: the screenshots' key. */
  dashboardId: number;
  source?: { envId: string; dashboardId: number };
}

export async function checkDashboard(
  svc: BrowserCheckServices,
  req: BrowserCheckRequest,
  log: { info(m: string): void; warn(m: string): void },
): Promise<BrowserCheck> {
  const started = Date.now();
  const [target, source] = await Promise.all([
    renderSide(svc, req.targetEnvId, req.dashboardId),
    req.source ? renderSide(svc, req.source.envId, req.source.dashboardId) : Promise.resolve(null),
  ]);
  const duration = () => Date.now() - started;
  if ('reason' in target) {
    log.warn(`browser check of target dashboard ${req.dashboardId}: not verifiable, ${target.reason}`);
    return { verdict: 'not_verifiable', reason: target.reason, charts: [], duration_ms: duration() };
  }
  const shots: Partial<Record<ScreenshotSide, string>> = { target: await save(svc, req, 'target', target) };
  if (source && !('reason' in source)) shots.source = await save(svc, req, 'source', source);
  const sourceCharts: RenderedChart[] | null = source && !('reason' in source) ? source.charts : null;
  const judged = judgeRendered(target.charts, sourceCharts);
  const sourceNote = source && 'reason' in source ? `the source could not be rendered (${source.reason})` : undefined;
  const reason = [judged.reason, sourceNote].filter(Boolean).join('; ') || undefined;
  log.info(
    `browser check of target dashboard ${req.dashboardId}: ${judged.verdict}, ${target.charts.filter((c) => c.state === 'ok').length}/${target.charts.length} charts drawn in ${duration()} ms`,
  );
  return {
    verdict: judged.verdict,
    ...(reason ? { reason } : {}),
    charts: judged.charts,
    target_screenshot_id: shots.target,
    ...(shots.source ? { source_screenshot_id: shots.source } : {}),
    duration_ms: duration(),
  };
}

/** One side rendered, or why it could not be (the environment gone, a host the egress policy refuses, no Chromium, Superset's frontend unreachable). */
async function renderSide(svc: BrowserCheckServices, envId: string, dashboardId: number): Promise<Rendered | { reason: string }> {
  const { deps } = svc;
  try {
    const { connection } = await deps.stores.environments.connections()(envId);
    const egress = egressPolicy(deps.config);
    // Refused here with the policy's reason; the browser's own connections go through it too (render.ts).
    await assertDestinationAllowed(egress, connection.baseUrl, 'base_url');
    const budgetMs = deps.config.BROWSER_CHECK_BUDGET_SECONDS * 1000;
    return await renderDashboard(svc.pool, { ...connection, dashboardId, egress }, budgetMs);
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err) };
  }
}

async function save(svc: BrowserCheckServices, req: BrowserCheckRequest, side: ScreenshotSide, r: Rendered): Promise<string> {
  return svc.deps.stores.browserScreenshots.save({ taskId: req.taskId, dashboardId: req.dashboardId, side, png: r.png });
}
