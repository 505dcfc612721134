/**
 * The first reading of a command: each token marked as what it is (a lexicon concept, a
 * preposition, a filler, an environment, a number, a task id or the start of one, a commit, a
 * message or language marker, a verb that only says "do"), or left unmarked for the entities
 * (titles, slugs, a search text). Passes run in order and each marks only what the earlier ones
 * left free; a hyphenated word made of keywords ("git-статус") is split into them first.
 */
import { distance } from 'fastest-levenshtein';
import type { KnownEnvironment, Language } from './intent.ts';
import { lexicon, type Concept, type Lexicon, type Prep } from './lexicon.ts';
import { isSmallWord, splitCompounds } from './compounds.ts';
import { normaliseText } from './normalise.ts';
import { isFullTaskId, taskRefOf } from './task-ref.ts';
import type { Token } from './tokenise.ts';

export type Mark =
  | { kind: 'concept'; concept: Concept; typo: boolean; phrase: string }
  | { kind: 'prep'; preps: ReadonlySet<Prep> }
  | { kind: 'filler' }
  | { kind: 'env'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'task_id' }
  | { kind: 'commit' }
  | { kind: 'marker' }
  | { kind: 'lang'; value: Language }
  /** A verb that only says "do" ("сохрани", "save"): never part of a name. */
  | { kind: 'verb' };

/** A command being read: its text, tokens, and one mark (or none yet) per token. */
export interface Sentence {
  text: string;
  tokens: Token[];
  marks: Array<Mark | undefined>;
}

const COMMIT = /^(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}$/;
const MAX_ID = 2_147_483_647;
const MAX_ENV_WORDS = 3;

/** Unmarked and not quoted: free for a later pass. */
export const free = (s: Sentence, i: number) => s.marks[i] === undefined && !s.tokens[i]!.quoted;

export function isConcept(s: Sentence, i: number, c: Concept): boolean {
  const m = s.marks[i];
  return m?.kind === 'concept' && m.concept === c;
}

/** Marks every token it can; answers the keywords read with one wrong letter. */
export function markTokens(s: Sentence, environments: readonly KnownEnvironment[]): Array<[string, string]> {
  const lex = lexicon();
  markTaskIdsAndEnvironments(s, environments);
  markPhrases(s, lex);
  // "git-статус": the parts of a hyphenated word that are all keywords are read as words of their own.
  if (splitCompounds(s, lex)) {
    markPhrases(s, lex);
    // A part no phrase took ("копию" of "бэкап-копию") is a filler, never a name.
    s.tokens.forEach((t, i) => {
      if (t.compoundPart && s.marks[i] === undefined && !isSmallWord(lex, t.norm)) s.marks[i] = { kind: 'filler' };
    });
  }
  markSmallWords(s, lex);
  markVerbs(s, lex);
  const corrections = markTypos(s, lex);
  markShortTaskIds(s);
  return corrections;
}

/** 1. Task ids and the caller's environments (exact names or ids, quoted or not, up to three words). */
function markTaskIdsAndEnvironments(s: Sentence, environments: readonly KnownEnvironment[]): void {
  const envIndex = new Map<string, string>();
  for (const e of environments) {
    envIndex.set(normaliseText(e.name), e.name);
    envIndex.set(e.id.toLowerCase(), e.name);
  }
  s.tokens.forEach((t, i) => {
    if (!t.quoted && isFullTaskId(t.norm)) s.marks[i] = { kind: 'task_id' };
    else if (t.quoted && envIndex.has(normaliseText(t.raw))) s.marks[i] = { kind: 'env', value: envIndex.get(normaliseText(t.raw))! };
  });
  for (let n = MAX_ENV_WORDS; n >= 1; n--) {
    for (let i = 0; i + n <= s.tokens.length; i++) {
      const span = s.tokens.slice(i, i + n);
      if (!span.every((_, k) => free(s, i + k))) continue;
      const name = envIndex.get(span.map((t) => t.norm).join(' '));
      if (name) for (let k = 0; k < n; k++) s.marks[i + k] = k === 0 ? { kind: 'env', value: name } : { kind: 'filler' };
    }
  }
}

/** 2. Lexicon phrases, longest first, by stem (every case and number form of a word); again after compounds are split. */
function markPhrases(s: Sentence, lex: Lexicon): void {
  for (let i = 0; i < s.tokens.length; i++) {
    for (const p of lex.phrases) {
      const n = p.words.length;
      if (i + n > s.tokens.length) continue;
      let ok = true;
      for (let k = 0; k < n && ok; k++) {
        const t = s.tokens[i + k]!;
        ok = free(s, i + k) && (t.stem === p.words[k]!.stem || t.norm === p.words[k]!.norm);
      }
      if (!ok) continue;
      for (let k = 0; k < n; k++)
        s.marks[i + k] = { kind: 'concept', concept: p.concept, typo: false, phrase: p.words.map((w) => w.norm).join(' ') };
      i += n - 1;
      break;
    }
  }
}

/** 3. Fillers (phrases first), prepositions, markers, numbers, commits, environment aliases. */
function markSmallWords(s: Sentence, lex: Lexicon): void {
  const { tokens, marks } = s;
  for (let i = 0; i < tokens.length; i++) {
    if (!free(s, i)) continue;
    const f = lex.fillers.find((words) => words.every((w, k) => i + k < tokens.length && free(s, i + k) && tokens[i + k]!.norm === w));
    if (f) {
      for (let k = 0; k < f.length; k++) marks[i + k] = { kind: 'filler' };
      i += f.length - 1;
      continue;
    }
    const t = tokens[i]!;
    const preps = lex.preps.get(t.norm);
    if (preps) marks[i] = { kind: 'prep', preps };
    else if (lex.messageMarkers.has(t.norm)) marks[i] = { kind: 'marker' };
    else if (lex.languageMarkers.has(t.norm)) marks[i] = { kind: 'lang', value: lex.languageMarkers.get(t.norm)! };
    else if (/^\d{1,10}$/.test(t.norm) && Number(t.norm) > 0 && Number(t.norm) <= MAX_ID)
      marks[i] = { kind: 'number', value: Number(t.norm) };
    else if (COMMIT.test(t.norm)) marks[i] = { kind: 'commit' };
    else if (lex.envAliases.has(t.norm) || lex.envAliases.has(`stem:${t.stem}`))
      marks[i] = { kind: 'env', value: (lex.envAliases.get(t.norm) ?? lex.envAliases.get(`stem:${t.stem}`))! };
  }
}

/**
 * 4. Verbs that only say "do": where a command starts or after another keyword ("сохрани
 * резервную копию дашборда X"), never a name. After an object's noun, inside a run of name words
 * or capitalised mid-sentence they are part of a name ("dashboard Save Points"), and stay free.
 */
function markVerbs(s: Sentence, lex: Lexicon): void {
  s.tokens.forEach((t, i) => {
    if (!free(s, i) || !(lex.verbs.norms.has(t.norm) || lex.verbs.stems.has(t.stem))) return;
    if (i > 0) {
      const prev = s.marks[i - 1];
      const inName = prev === undefined || s.tokens[i - 1]!.quoted || (prev.kind === 'concept' && OBJECT_NOUNS.has(prev.concept));
      if (inName || /^\p{Lu}/u.test(t.raw)) return;
    }
    s.marks[i] = { kind: 'verb' };
  });
}

const OBJECT_NOUNS: ReadonlySet<Concept> = new Set(['dashboard', 'dataset', 'field']);

/**
 * 5. Keywords with one wrong, missing or extra letter, or two neighbours swapped. Capitalised
 * words other than the first are names ("Stats"), not keywords.
 */
function markTypos(s: Sentence, lex: Lexicon): Array<[string, string]> {
  const corrections: Array<[string, string]> = [];
  for (let i = 0; i < s.tokens.length; i++) {
    const t = s.tokens[i]!;
    const shortest = t.script === 'cyrillic' ? 4 : 5;
    if (!free(s, i) || t.norm.length < shortest || !/^\p{L}+$/u.test(t.norm)) continue;
    if (i > 0 && /^\p{Lu}/u.test(t.raw)) continue;
    const best = nearestKeyword(t, lex);
    if (best) {
      s.marks[i] = { kind: 'concept', concept: best.concept, typo: true, phrase: best.words[0]!.norm };
      corrections.push([t.raw, best.words[0]!.norm]);
    }
  }
  return corrections;
}

/** The one-word lexicon phrase at most one edit from the token (by word or by stem), the nearest first. */
function nearestKeyword(t: Token, lex: Lexicon): Lexicon['phrases'][number] | undefined {
  let best: { phrase: Lexicon['phrases'][number]; d: number } | undefined;
  for (const p of lex.phrases) {
    if (p.words.length !== 1) continue;
    const w = p.words[0]!;
    if (w.norm.length < 4 || Math.abs(w.norm.length - t.norm.length) > 2) continue;
    const d = Math.min(
      distance(t.norm, w.norm),
      swapped(t.norm, w.norm) ? 1 : 9,
      w.stem.length >= 4 && t.stem.length >= 4 && Math.abs(w.stem.length - t.stem.length) <= 1 ? distance(t.stem, w.stem) : 9,
    );
    if (d <= 1 && (!best || d < best.d)) best = { phrase: p, d };
  }
  return best?.phrase;
}

/** Two neighbouring letters swapped ("lsit" for "list"). */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const diff: number[] = [];
  for (let i = 0; i < a.length && diff.length <= 2; i++) if (a[i] !== b[i]) diff.push(i);
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]!] && a[diff[1]!] === b[diff[0]!];
}

/**
 * 6. A task by the start of its id ("7f1c2a", as people copy git hashes: task-ref.ts), in a
 * command about a task: one naming a task, or asking for logs or a status and naming no
 * dashboard, dataset or git operation. Read last, so a six-digit number or a commit-like word
 * elsewhere stays what it is.
 */
function markShortTaskIds(s: Sentence): void {
  const has = (c: Concept) => s.marks.some((m) => m?.kind === 'concept' && m.concept === c);
  const other = (['dashboard', 'dataset', 'git', 'commit', 'deploy'] as const).some(has);
  if (!has('task') && (other || !(has('logs') || has('status')))) return;
  s.tokens.forEach((t, i) => {
    const m = s.marks[i];
    if (t.quoted || (m !== undefined && m.kind !== 'commit' && m.kind !== 'number')) return;
    if (taskRefOf(t.norm)?.kind === 'prefix') s.marks[i] = { kind: 'task_id' };
  });
}
