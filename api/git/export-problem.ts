import { ArchiveError } from '../../lib/archive/unzip.ts';
import { BundleError } from '../../lib/bundles/bundle.ts';
import { AppError, UpstreamUnavailableError } from '../../lib/errors.ts';

/**
 * Why Superset's export of a dashboard cannot be written into its repository. An archive the size
 * rules refuse (declared past the budget, or inflating past what it declares: lib/archive/unzip.ts)
 * is refused for good (422 `export_refused`); an archive that is not a usable export is Superset
 * answering garbage (503, as any upstream that does).
 */
export function exportProblem(dashboardId: number, err: unknown): AppError {
  if (err instanceof BundleError && err.cause instanceof ArchiveError && err.cause.problem !== 'unreadable')
    return new AppError(
      422,
      'export_refused',
      'Export refused',
      `Superset's export of dashboard ${dashboardId} is refused: ${err.message}`,
    );
  return new UpstreamUnavailableError('Superset', `Superset's export of dashboard ${dashboardId} is not usable: ${(err as Error).message}`);
}
