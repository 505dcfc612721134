/**
 * The lexicon (lexicon/keywords.json) compiled for matching: every entry tokenised, normalised
 * and stemmed once, phrases longest first.
 */
import { readFileSync } from 'node:fs';
import { makeToken, tokenise } from './tokenise.ts';

export const CONCEPTS = [
  'help',
  'dashboard',
  'dataset',
  'environment',
  'task',
  'logs',
  'status',
  'list',
  'search',
  'migrate',
  'dry_run',
  'backup',
  'docs',
  'generate',
  'git',
  'commit',
  'deploy',
  'pull_request',
  'latest',
  'unsupported',
  'review',
  'question',
  'field',
  'means',
  'set',
  'approve',
  'mapping',
  'answer',
  'database',
  'validate',
  'uses',
] as const;
export type Concept = (typeof CONCEPTS)[number];
export type Prep = 'from' | 'to' | 'in';

interface RawLexicon {
  concepts: Record<Concept, { ru: string[]; en: string[] }>;
  prepositions: Record<Prep, { ru: string[]; en: string[] }>;
  message_markers: { ru: string[]; en: string[] };
  language_markers: Record<'ru' | 'en', Record<'ru' | 'en', string[]>>;
  fillers: { ru: string[]; en: string[] };
  verbs: { ru: string[]; en: string[] };
  environment_aliases: Record<string, string[]>;
}

export interface Phrase {
  concept: Concept;
  /** Normalised words and their stems. */
  words: Array<{ norm: string; stem: string }>;
}

export interface Lexicon {
  /** Longest first. */
  phrases: Phrase[];
  preps: Map<string, Set<Prep>>;
  messageMarkers: Set<string>;
  languageMarkers: Map<string, 'ru' | 'en'>;
  /** Filler phrases as normalised word lists, longest first. */
  fillers: string[][];
  /** Alias word → canonical environment word (`прод` → `prod`); canonical words map to themselves. */
  envAliases: Map<string, string>;
  /** Verbs that are never an object's name where a command starts or after a keyword: by word, and by stem (four letters or more). */
  verbs: { norms: Set<string>; stems: Set<string> };
}

function words(entry: string) {
  return tokenise(entry).map((t) => ({ norm: t.norm, stem: t.stem }));
}

export function compileLexicon(raw: RawLexicon): Lexicon {
  const phrases: Phrase[] = [];
  for (const concept of CONCEPTS) {
    const c = raw.concepts[concept];
    for (const entry of [...c.ru, ...c.en]) phrases.push({ concept, words: words(entry) });
  }
  phrases.sort((a, b) => b.words.length - a.words.length);
  const preps = new Map<string, Set<Prep>>();
  for (const [prep, langs] of Object.entries(raw.prepositions) as Array<[Prep, { ru: string[]; en: string[] }]>) {
    for (const w of [...langs.ru, ...langs.en]) {
      const norm = makeToken(w, 0, w.length).norm;
      if (!preps.has(norm)) preps.set(norm, new Set());
      preps.get(norm)!.add(prep);
    }
  }
  const languageMarkers = new Map<string, 'ru' | 'en'>();
  for (const byTarget of Object.values(raw.language_markers)) {
    for (const [lang, list] of Object.entries(byTarget) as Array<['ru' | 'en', string[]]>) {
      for (const w of list) languageMarkers.set(makeToken(w, 0, w.length).norm, lang);
    }
  }
  const envAliases = new Map<string, string>();
  for (const [canonical, aliases] of Object.entries(raw.environment_aliases)) {
    envAliases.set(canonical, canonical);
    for (const a of aliases) {
      // By word and by stem, so "на проде" reads like "прод".
      const t = makeToken(a, 0, a.length);
      envAliases.set(t.norm, canonical);
      if (t.stem.length >= 3) envAliases.set(`stem:${t.stem}`, canonical);
    }
  }
  const verbs = { norms: new Set<string>(), stems: new Set<string>() };
  for (const w of [...raw.verbs.ru, ...raw.verbs.en]) {
    const t = makeToken(w, 0, w.length);
    verbs.norms.add(t.norm);
    // A short stem ("да" of "дай") would catch unrelated words.
    if (t.stem.length >= 4) verbs.stems.add(t.stem);
  }
  return {
    verbs,
    phrases,
    preps,
    messageMarkers: new Set([...raw.message_markers.ru, ...raw.message_markers.en].map((w) => makeToken(w, 0, w.length).norm)),
    languageMarkers,
    fillers: [...raw.fillers.ru, ...raw.fillers.en].map((f) => words(f).map((w) => w.norm)).sort((a, b) => b.length - a.length),
    envAliases,
  };
}

let cached: Lexicon | undefined;
export function lexicon(): Lexicon {
  cached ??= compileLexicon(JSON.parse(readFileSync(new URL('./lexicon/keywords.json', import.meta.url), 'utf8')) as RawLexicon);
  return cached;
}
