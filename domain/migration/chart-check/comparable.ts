/**
 * The one decider of what two successful answers to a chart's check can be compared on, and the
 * verdict on it. Both ran, which is always comparable; beyond that only what both releases report
 * the same way is judged (./release.ts says how each release answers):
 * - a query whose post-processing names columns by values of the data (a pivot by series
 *   columns, histogram bins) answers with other columns wherever the data differ: with rows on
 *   both sides its columns are not compared;
 * - answers through different endpoints (the legacy explore one and chart-data) are shaped
 *   differently: their columns are not compared;
 * - a release before 6.0 answers an empty result without its columns: nothing to compare;
 * - Superset post-processes only a result with rows (an empty answer carries the query's own
 *   columns, a non-empty one the pivoted and renamed ones): columns are compared only when both
 *   answers have rows or neither has;
 * - within one release line the columns must be the same, in order, and (both with rows) of the
 *   same types; across release lines every column the source answered must be in the target's
 *   answer (an order or an extra column is the release's representation), and a column missing
 *   there is a difference the check cannot judge: each release answered the query without an
 *   error, where a column really gone makes Superset refuse it.
 */
import type { ChartCheckMethod } from '../../../contracts/migration.ts';
import { answersEmptyWithoutColumns, releaseName, sameReleaseLine } from './release.ts';
import type { AnswerColumn, ChartAnswer, Classified } from './types.ts';

/** Where an answer came from: the environment's release (major.minor.patch; null: unknown) and the check's method. */
export interface AnswerSide {
  release: string | null;
  method: ChartCheckMethod | null;
  /** The check's query names its answer's columns by values of the data (./run.ts columnsFromData). */
  columnsFromData?: boolean;
}

type Ran = Extract<ChartAnswer, { ok: true }>;

export function columnsVerdict(source: Ran, target: Ran, sourceSide: AnswerSide, targetSide: AnswerSide): Classified {
  const skipped = notComparable(source, target, sourceSide, targetSide);
  if (skipped) return { classification: 'passes', reason: `ran in both; columns not compared: ${skipped}` };
  if (sameReleaseLine(sourceSide.release, targetSide.release)) {
    const differs = columnDifference(source.columns, target.columns, source.rows > 0 && target.rows > 0);
    return differs ? { classification: 'broken_by_migration', reason: differs } : { classification: 'passes' };
  }
  const have = new Set(target.columns.map((c) => c.name));
  const missing = source.columns.filter((c) => !have.has(c.name)).map((c) => c.name);
  if (!missing.length) return { classification: 'passes' };
  return {
    classification: 'not_verifiable',
    reason:
      `the target's answer (${releaseName(targetSide.release)}) has columns [${names(target.columns)}] where the source's (${releaseName(sourceSide.release)}) has [${names(source.columns)}]; ` +
      "both ran without an error, and the two releases name an answer's columns differently, so the difference is not judged",
  };
}

/** Why the two answers' columns cannot be compared, or null when they can. */
function notComparable(source: Ran, target: Ran, sourceSide: AnswerSide, targetSide: AnswerSide): string | null {
  const legacy = (s: AnswerSide) => s.method === 'legacy_api';
  if (sourceSide.method && targetSide.method && legacy(sourceSide) !== legacy(targetSide))
    return `the source was checked through ${endpoint(sourceSide)} and the target through ${endpoint(targetSide)}, which shape an answer differently`;
  for (const [side, answer, what] of [
    [sourceSide, source, 'source'],
    [targetSide, target, 'target'],
  ] as const)
    if (answer.rows === 0 && answer.columns.length === 0)
      return answersEmptyWithoutColumns(side.release)
        ? `the ${what}'s release (${side.release}) answers a result without rows without its columns`
        : `the ${what} answered a result without rows and without columns`;
  if (source.rows > 0 && target.rows > 0 && (sourceSide.columnsFromData || targetSide.columnsFromData))
    return "the query names the answer's columns by values of the data (a pivot by series columns, histogram bins), which differ between environments";
  if (source.rows > 0 !== target.rows > 0)
    return `only the ${source.rows > 0 ? 'source' : 'target'}'s answer has rows, and Superset post-processes only a result with rows`;
  return null;
}

const endpoint = (s: AnswerSide) => (s.method === 'legacy_api' ? 'the legacy explore endpoint' : 'the chart-data API');
const names = (cs: AnswerColumn[]) => cs.map((c) => c.name).join(', ');

/** Within one release line: how the target's columns differ from the source's, or null. */
function columnDifference(source: AnswerColumn[], target: AnswerColumn[], compareTypes: boolean): string | null {
  if (names(source) !== names(target))
    return `the target's answer has columns [${names(target)}] where the source's has [${names(source)}]`;
  if (!compareTypes) return null;
  const changed = target.filter((c, i) => c.type !== null && source[i]!.type !== null && c.type !== source[i]!.type).map((c) => c.name);
  return changed.length ? `columns of another type in the target than in the source: ${changed.join(', ')}` : null;
}
