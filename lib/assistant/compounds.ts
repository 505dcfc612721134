/**
 * Hyphenated words made of keywords: "git-статус", "task-status", "бэкап-копия". The tokeniser
 * keeps a hyphenated word whole (slugs, environment names like acc-dev and task ids are), so such
 * a word would otherwise be read as a name. It is split into its parts only when one part is a
 * keyword and every other is a keyword, a word of a lexicon phrase ("копию" of "резервную копию"),
 * a filler or a preposition: "Sales-Overview" or "migration-7f1c2a" stay whole, and so does
 * anything the lexicon has whole ("dry-run", "дата-сет"). A part that no phrase then takes is a
 * filler, never a name (marks.ts).
 */
import type { Lexicon } from './lexicon.ts';
import { makeToken, type Token } from './tokenise.ts';

/** What this reads and changes of a sentence being marked (marks.ts's Sentence; not imported from there, which imports this). */
interface Splittable {
  tokens: Token[];
  marks: unknown[];
}

const HYPHEN = /[-\u2010\u2011]/u;

interface Vocabulary {
  /** One-word keywords, by word (`w:`) and by stem (`s:`). */
  keywords: Set<string>;
  /** Words of longer phrases, the same way. */
  phraseWords: Set<string>;
  small: Set<string>;
}

const vocabularies = new WeakMap<Lexicon, Vocabulary>();

/** The lexicon's one-word keywords (by word and by stem) and its small words, built once per lexicon. */
function vocabularyOf(lex: Lexicon): Vocabulary {
  let v = vocabularies.get(lex);
  if (!v) {
    const keywords = new Set<string>();
    const phraseWords = new Set<string>();
    for (const p of lex.phrases) {
      const into = p.words.length === 1 ? keywords : phraseWords;
      for (const w of p.words) {
        into.add(`w:${w.norm}`);
        into.add(`s:${w.stem}`);
      }
    }
    const small = new Set<string>([...lex.fillers.filter((f) => f.length === 1).map((f) => f[0]!), ...lex.preps.keys()]);
    v = { keywords, phraseWords, small };
    vocabularies.set(lex, v);
  }
  return v;
}

/** The parts of a hyphenated token, each a token of its own with its offsets in the text. */
function partsOf(t: Token): Token[] {
  const parts: Token[] = [];
  let from = 0;
  for (const piece of t.raw.split(HYPHEN)) {
    if (piece) parts.push({ ...makeToken(piece, t.start + from, t.start + from + piece.length), compoundPart: true });
    from += piece.length + 1;
  }
  return parts;
}

/** Splits every free hyphenated word made of keywords into its parts; true when one was. */
export function splitCompounds(s: Splittable, lex: Lexicon): boolean {
  const { keywords, phraseWords, small } = vocabularyOf(lex);
  const isKeyword = (p: Token) => keywords.has(`w:${p.norm}`) || keywords.has(`s:${p.stem}`);
  const known = (p: Token) => isKeyword(p) || phraseWords.has(`w:${p.norm}`) || phraseWords.has(`s:${p.stem}`) || small.has(p.norm);
  let split = false;
  for (let i = s.tokens.length - 1; i >= 0; i--) {
    const t = s.tokens[i]!;
    if (t.quoted || s.marks[i] !== undefined || !HYPHEN.test(t.raw)) continue;
    const parts = partsOf(t);
    if (parts.length < 2 || !parts.some(isKeyword) || !parts.every(known)) continue;
    s.tokens.splice(i, 1, ...parts);
    s.marks.splice(i, 1, ...parts.map(() => undefined));
    split = true;
  }
  return split;
}

/** A filler or preposition of the lexicon: read as such by the small-word pass, not made a filler here. */
export function isSmallWord(lex: Lexicon, norm: string): boolean {
  return vocabularyOf(lex).small.has(norm);
}
