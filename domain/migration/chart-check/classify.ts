/**
 * A chart's classification from the same check in the source and the target, judged only on what
 * both releases answer comparably (./comparable.ts): an error against a success always; the
 * columns an answer returned (metric labels included) where both answers report them at the same
 * stage; their types where both had rows to infer them from and the releases are one line. What
 * differs in a way the check cannot judge is `not_verifiable` with its reason, never a break.
 */
import { columnsVerdict, type AnswerSide } from './comparable.ts';
import type { ChartAnswer, Classified } from './types.ts';

export type { AnswerSide, Classified };

/**
 * `source` is null when there is no source chart to compare with (a git deploy, a chart only the
 * target has). `sides` says each answer's release and check method; without it both are taken as
 * one release checked one way (the strictest comparison).
 */
export function classify(target: ChartAnswer, source: ChartAnswer | null, sides?: { target: AnswerSide; source: AnswerSide }): Classified {
  if ('unverifiable' in target) return { classification: 'not_verifiable', reason: target.unverifiable };
  if (!source) return target.ok ? { classification: 'passes' } : { classification: 'broken_by_migration' };
  if ('unverifiable' in source)
    return target.ok
      ? { classification: 'passes' }
      : { classification: 'not_verifiable', reason: `fails in the target, and the source could not be checked: ${source.unverifiable}` };
  if (!target.ok) return { classification: source.ok ? 'broken_by_migration' : 'failing_in_source' };
  if (!source.ok) return { classification: 'passes' };
  const same: AnswerSide = { release: null, method: null };
  return columnsVerdict(source, target, sides?.source ?? same, sides?.target ?? same);
}
