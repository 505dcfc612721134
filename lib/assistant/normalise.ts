/**
 * Text normalisation for the assistant's parser: lower case, `ё` read as `е`, and Latin and
 * Cyrillic look-alike letters folded into the script the rest of the word is written in, so
 * "дaшборд" (a Latin "a") and "bаckup" (a Cyrillic "а") read as the words they look like.
 */

const LATIN_TO_CYRILLIC: Record<string, string> = {
  a: 'а',
  b: 'в',
  c: 'с',
  e: 'е',
  h: 'н',
  k: 'к',
  m: 'м',
  o: 'о',
  p: 'р',
  t: 'т',
  x: 'х',
  y: 'у',
};
const CYRILLIC_TO_LATIN: Record<string, string> = Object.fromEntries(Object.entries(LATIN_TO_CYRILLIC).map(([l, c]) => [c, l]));
Object.assign(CYRILLIC_TO_LATIN, { і: 'i', ј: 'j', ѕ: 's' });

const CYRILLIC = /\p{Script=Cyrillic}/u;
const LATIN = /\p{Script=Latin}/u;

export type Script = 'cyrillic' | 'latin' | 'number' | 'other';

export function scriptOf(word: string): Script {
  let cyr = 0;
  let lat = 0;
  for (const ch of word) {
    if (CYRILLIC.test(ch)) cyr++;
    else if (LATIN.test(ch)) lat++;
  }
  if (cyr === 0 && lat === 0) return /\d/.test(word) ? 'number' : 'other';
  return cyr >= lat ? 'cyrillic' : 'latin';
}

/** Lower case, ё → е, the hyphen characters as `-` and ’ as ', look-alikes folded into the word's dominant script. */
export function normaliseWord(word: string): string {
  const lower = word
    .toLowerCase()
    .replace(/ё/g, 'е')
    .replace(/[\u2010\u2011]/g, '-')
    .replace(/’/g, "'");
  let cyrOnly = 0; // letters that exist only in Cyrillic (no Latin look-alike)
  let latOnly = 0;
  let cyr = 0;
  let lat = 0;
  for (const ch of lower) {
    if (CYRILLIC.test(ch)) {
      cyr++;
      if (!(ch in CYRILLIC_TO_LATIN)) cyrOnly++;
    } else if (LATIN.test(ch)) {
      lat++;
      if (!(ch in LATIN_TO_CYRILLIC)) latOnly++;
    }
  }
  if (cyr === 0 || lat === 0) return lower;
  // A word mixing scripts: the letters only one script has decide; look-alikes follow them.
  const toCyrillic = cyrOnly > latOnly || (cyrOnly === latOnly && cyr >= lat);
  const map = toCyrillic ? LATIN_TO_CYRILLIC : CYRILLIC_TO_LATIN;
  let out = '';
  for (const ch of lower) out += map[ch] ?? ch;
  return out;
}

/** A whole string normalised word by word (for comparing names and titles). */
export function normaliseText(text: string): string {
  return text
    .split(/(\s+)/)
    .map((part) => (/\s/.test(part) ? ' ' : normaliseWord(part)))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
}
