/** What a dialect's check answers: the SQL to send on (the parser's own rendering), or why not. */
export type Checked = { ok: true; sql: string } | { ok: false; reason: string };

export function refused(reason: string): Checked {
  return { ok: false, reason };
}
