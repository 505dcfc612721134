/**
 * A chart's classification from the same check in the source and the target. Only what can be
 * compared between environments without assuming equal data is: an error or not, the columns an
 * answer returned (metric labels included) and, where both answers had rows to infer them from,
 * their types.
 */
import type { ChartClassification } from '../../../contracts/migration.ts';
import type { AnswerColumn, ChartAnswer } from './types.ts';

export interface Classified {
  classification: ChartClassification;
  reason?: string;
}

/** `source` is null when there is no source chart to compare with (a git deploy, a chart only the target has). */
export function classify(target: ChartAnswer, source: ChartAnswer | null): Classified {
  if ('unverifiable' in target) return { classification: 'not_verifiable', reason: target.unverifiable };
  if (!source) return target.ok ? { classification: 'passes' } : { classification: 'broken_by_migration' };
  if ('unverifiable' in source)
    return target.ok
      ? { classification: 'passes' }
      : { classification: 'not_verifiable', reason: `fails in the target, and the source could not be checked: ${source.unverifiable}` };
  if (!target.ok) return { classification: source.ok ? 'broken_by_migration' : 'failing_in_source' };
  if (!source.ok) return { classification: 'passes' };
  const differs = columnDifference(source.columns, target.columns, source.rows > 0 && target.rows > 0);
  return differs ? { classification: 'broken_by_migration', reason: differs } : { classification: 'passes' };
}

/** How the target's columns differ from the source's, or null. */
function columnDifference(source: AnswerColumn[], target: AnswerColumn[], compareTypes: boolean): string | null {
  const names = (cs: AnswerColumn[]) => cs.map((c) => c.name).join(', ');
  if (names(source) !== names(target)) return `the target's answer has columns [${names(target)}] where the source's has [${names(source)}]`;
  if (!compareTypes) return null;
  const changed = target.filter((c, i) => c.type !== null && source[i]!.type !== null && c.type !== source[i]!.type).map((c) => c.name);
  return changed.length ? `columns of another type in the target than in the source: ${changed.join(', ')}` : null;
}
