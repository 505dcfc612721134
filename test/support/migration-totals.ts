import type { MigrationResult } from '../../contracts/migration.ts';

/** A migration result's totals: every count 0 but those given (tests that state a summary or a stored result). */
export function migrationTotals(counts: Partial<MigrationResult['totals']> = {}): MigrationResult['totals'] {
  return {
    requested: 0,
    processed: 0,
    imported: 0,
    unchanged: 0,
    unchanged_with_errors: 0,
    imported_with_errors: 0,
    planned: 0,
    skipped: 0,
    failed: 0,
    not_started: 0,
    ...counts,
  };
}
