/**
 * Splits a command into tokens: words (letters, digits and the joiners `-`, `_`, `.`, `:`, `/`
 * inside them, so slugs, environment names and task ids stay whole; the hyphen characters `‐` `‑`
 * as `-`; an apostrophe, so "what's" is one word), numbers (`#12` too), and
 * quoted strings ("…", «…», “…”, '…', `…`), which are kept verbatim as one token.
 */
import { stemmer as stemRu } from '@orama/stemmers/russian';
import { stemmer as stemEn } from '@orama/stemmers/english';
import { normaliseWord, scriptOf, type Script } from './normalise.ts';

export interface Token {
  /** As written (inside the quotes for a quoted token). */
  raw: string;
  /** normaliseWord(raw); for a quoted token the raw text trimmed. */
  norm: string;
  /** Snowball stem of norm in its script's language. */
  stem: string;
  script: Script;
  quoted: boolean;
  /** Offsets in the original text. */
  start: number;
  end: number;
  /** A part of a hyphenated word of keywords, split off (compounds.ts). */
  compoundPart?: boolean;
}

const QUOTES: Record<string, string> = { '"': '"', '«': '»', '“': '”', '„': '“', "'": "'", '`': '`' };
const WORD = /[#]?[\p{L}\p{N}](?:[\p{L}\p{N}_]|[-\u2010\u2011.:/'’](?=[\p{L}\p{N}_]))*/uy;

export function stem(norm: string, script: Script): string {
  if (script === 'cyrillic') return stemRu(norm);
  if (script === 'latin') return stemEn(norm);
  return norm;
}

export function makeToken(raw: string, start: number, end: number, quoted = false): Token {
  if (quoted) {
    const text = raw.trim();
    return { raw: text, norm: text, stem: text, script: scriptOf(text), quoted, start, end };
  }
  const clean = raw.startsWith('#') && /^#\d+$/.test(raw) ? raw.slice(1) : raw;
  // Russian emphatic particles glued with a hyphen ("покажи-ка") do not change the word.
  const norm = normaliseWord(clean).replace(/-(ка|то|же)$/u, '');
  const script = scriptOf(norm);
  return { raw: clean, norm, stem: stem(norm, script), script, quoted, start, end };
}

export function tokenise(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const close = QUOTES[ch];
    // A quote opens only at a word boundary (so "let's" and "don't" stay words).
    if (close && (i === 0 || /[\s([{:,]/.test(text[i - 1]!))) {
      const j = text.indexOf(close, i + 1);
      if (j > i + 1) {
        tokens.push(makeToken(text.slice(i + 1, j), i, j + 1, true));
        i = j + 1;
        continue;
      }
    }
    WORD.lastIndex = i;
    const m = WORD.exec(text);
    if (m) {
      tokens.push(makeToken(m[0], i, i + m[0].length));
      i += m[0].length;
      continue;
    }
    i++;
  }
  return tokens;
}
