/**
 * How a command names a task: its full id (`<type>-<uuid>`, as the API answers it), or, as people
 * copy git hashes, the start of its UUID part, six hex digits or more (`7f1c2a`), with or without
 * the type in front (`migration-7f1c2a`). The one decider of which is which: the parser marks
 * either as the task's id, the API looks a short one up as a prefix among the caller's tasks.
 */

const FULL = /^[a-z_]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_SHAPE = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';
/** Fewer hex digits than this match too many tasks to be worth a lookup (and read as ordinary words). */
export const MIN_PREFIX_DIGITS = 6;

export type TaskRef = { kind: 'id'; id: string } | { kind: 'prefix'; type?: string; prefix: string };

/** A prefix of a UUID's written form with at least MIN_PREFIX_DIGITS hex digits: `7f1c2a`, `7f1c2a9b-3c`. */
function isUuidPrefix(s: string): boolean {
  if (s.length < MIN_PREFIX_DIGITS || s.length > UUID_SHAPE.length) return false;
  for (let i = 0; i < s.length; i++) {
    const ok = UUID_SHAPE[i] === '-' ? s[i] === '-' : /[0-9a-f]/.test(s[i]!);
    if (!ok) return false;
  }
  return !s.endsWith('-');
}

export function isFullTaskId(word: string): boolean {
  return FULL.test(word);
}

/** The task a word names, or undefined when it names none (lower-case words only, as the parser normalises them). */
export function taskRefOf(word: string): TaskRef | undefined {
  if (FULL.test(word)) return { kind: 'id', id: word };
  if (isUuidPrefix(word)) return { kind: 'prefix', prefix: word };
  const typed = /^([a-z_]+)-(.+)$/.exec(word);
  if (typed && isUuidPrefix(typed[2]!)) return { kind: 'prefix', type: typed[1]!, prefix: typed[2]! };
  return undefined;
}
