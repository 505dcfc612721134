/**
 * The entities of a dataset review write: a field and its meaning ("поле region означает регион
 * продаж", "set field region to Sales region"): the word after "field" is the field, whatever it
 * reads as; the text after it, past "means" / "to" / fillers, is the meaning, verbatim. An answer
 * is the text after "answer".
 */
import type { Entities } from './intent.ts';
import { isConcept, type Sentence } from './marks.ts';

export function reviewEntities(s: Sentence, operation: 'set_field' | 'answer'): Entities {
  const { tokens, marks } = s;
  if (operation === 'answer') {
    const a = tokens.findIndex((_, i) => isConcept(s, i, 'answer'));
    const answer = restAfter(s, a + 1, operation);
    return answer ? { answer } : {};
  }
  const f = tokens.findIndex((_, i) => isConcept(s, i, 'field'));
  let k = f + 1;
  while (k < tokens.length && (marks[k]?.kind === 'filler' || marks[k]?.kind === 'prep') && !tokens[k]!.quoted) k++;
  if (f < 0 || k >= tokens.length) return {};
  const out: Entities = { field: tokens[k]!.raw };
  const label = restAfter(s, k + 1, operation);
  if (label) out.label = label;
  return out;
}

/** The text from `from` to the end, past the words that only lead into it. */
function restAfter(s: Sentence, from: number, operation: 'set_field' | 'answer'): string | undefined {
  const { text, tokens, marks } = s;
  // A meaning may begin with a filler word ("название товара"); an answer's "is" is skipped.
  const skippable = (i: number) => {
    const m = marks[i];
    if (tokens[i]!.quoted) return false;
    if (m?.kind === 'filler') return operation === 'answer';
    return m?.kind === 'prep' || (m?.kind === 'concept' && (m.concept === 'means' || m.concept === 'set'));
  };
  let j = from;
  while (j < tokens.length && skippable(j)) j++;
  if (j >= tokens.length) return undefined;
  if (j === tokens.length - 1 && tokens[j]!.quoted) return tokens[j]!.raw;
  const value = text
    .slice(tokens[j]!.start, tokens[tokens.length - 1]!.end)
    .trim()
    .replace(/[.!?;,]+$/u, '');
  return value || undefined;
}
