/**
 * The optional browser check of a migrated, deployed or published dashboard: the dashboard opened
 * in the target's Superset in headless Chromium (and the source's, when there is one), each chart's
 * rendered state read from Superset's own page, and a screenshot of each side.
 */

/** How a dashboard is verified: its charts' queries only (the default), or those and then the dashboard in a real browser. */
export const VERIFICATION_MODES = ['queries', 'browser'] as const;
export type VerificationMode = (typeof VERIFICATION_MODES)[number];

/** What Superset's page showed for one chart: drawn, an error alert (its text), or still loading when the time budget ran out. */
export type RenderedState = 'ok' | 'error' | 'loading';

export interface BrowserChart {
  name: string;
  state: RenderedState;
  /** The error as Superset shows it (state `error`), or why the chart counts as not rendered. */
  message?: string;
  /** The same chart's state in the source, when the source was rendered. */
  source_state?: RenderedState;
  source_message?: string;
}

/**
 * passes: every chart rendered, or failed on both sides alike; failed: a chart errors (or never
 * finishes) in the target but rendered in the source (or there is no source to hold it to);
 * not_verifiable: no browser, or Superset's frontend could not be reached (`reason` says which).
 */
export type BrowserVerdict = 'passes' | 'failed' | 'not_verifiable';

export interface BrowserCheck {
  verdict: BrowserVerdict;
  reason?: string;
  charts: BrowserChart[];
  /** Ids for GET /api/tasks/{id}/screenshots/{screenshot_id} (image/png). */
  target_screenshot_id?: string;
  source_screenshot_id?: string;
  duration_ms: number;
}

/** One dashboard's chart states as rendered on one side. */
export interface RenderedChart {
  id: number;
  name: string;
  state: RenderedState;
  message?: string;
}

/**
 * The verdict from both sides' rendered charts, matched by name (ids differ between environments).
 * A chart erroring in the target fails the check unless the same chart errors in the source too.
 */
export function judgeRendered(
  target: RenderedChart[],
  source: RenderedChart[] | null,
): Pick<BrowserCheck, 'verdict' | 'charts' | 'reason'> {
  const bySourceName = new Map((source ?? []).map((c) => [c.name, c]));
  const charts: BrowserChart[] = target.map((t) => {
    const s = bySourceName.get(t.name);
    return {
      name: t.name,
      state: t.state,
      ...(t.message ? { message: t.message } : {}),
      ...(s ? { source_state: s.state, ...(s.message ? { source_message: s.message } : {}) } : {}),
    };
  });
  const broken = charts.filter((c) => c.state !== 'ok' && !(c.source_state && c.source_state !== 'ok'));
  if (!broken.length) return { verdict: 'passes', charts };
  return {
    verdict: 'failed',
    charts,
    reason: `${broken.length} chart(s) do not render in the target${source ? ' but do in the source' : ''}: ${broken.map((c) => `'${c.name}'`).join(', ')}`,
  };
}
