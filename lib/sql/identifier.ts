/**
 * The one decider for "may this be written into SQL as a schema or catalog name": a
 * per-environment rule's `from` and `to` (checked when a person stores the rule, and again right
 * before a rule rewrites anything, for a rule that reached the store another way) and the name
 * the qualifier rewrite puts into a query.
 *
 * A rule holds for a pair of environments, whatever engines their databases run, so the set is
 * the one every dialect here writes the same way once quoted: letters, digits, `_`, `$` and `-`.
 * Nothing that ends or escapes a quoted name in any of them (`"`, `` ` ``, `'`, `[`, `]`,
 * backslash), nothing that separates (whitespace, `.`, `;`, `,`, parentheses) and nothing that
 * starts a comment gets through, so a name can never leave its quotes, whatever a renderer does.
 */

/** Longest name accepted (PostgreSQL keeps 63 bytes of a name, MySQL 64 characters; anything past that names another object). */
export const MAX_IDENTIFIER_CHARS = 63;

const ALLOWED = /^[\p{L}\p{M}\p{Nd}_$-]$/u;

/** Why `name` cannot be a schema or catalog name, completing "a schema name …"; undefined when it can. */
export function identifierProblem(name: string): string | undefined {
  if (!name) return 'may not be empty';
  const chars = Array.from(name); // by code point, not UTF-16 unit
  const at = chars.findIndex((c) => !ALLOWED.test(c));
  if (at < 0)
    return chars.length > MAX_IDENTIFIER_CHARS ? `is at most ${MAX_IDENTIFIER_CHARS} characters (this one has ${chars.length})` : undefined;
  const c = chars[at]!;
  const code = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const shown = /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(c) ? `'${c}' (${code})` : code;
  return `may hold only letters, digits, _, $ and -; ${shown} at position ${at + 1} is not one`;
}
