/**
 * What another server said, made fit to pass on: the one rule for quoting an upstream answer
 * (Superset, a git provider or remote) in an error or report. A body is never echoed, only a
 * reason from it: one line, bounded, no markup (an HTML page is named, never quoted: an error
 * page of a proxy or a login form says nothing a caller can use and may carry anything), and
 * anything that looks like a credential masked, the secrets the call itself sent included.
 */
import { REDACTED, redactText } from './redact.ts';

/** Longest reason passed on, in characters. */
export const MAX_REASON_CHARS = 200;

/** Markup: a tag, a comment, a doctype or a processing instruction. */
const MARKUP = /<\s*[a-z!?/]/i;
/** Line breaks, control and other invisible separators become one space. */
const BREAKS = /[\s\u0000-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\ufeff]+/g;
/** An opaque run of token characters holding letters and digits (API tokens, session ids, hashes). */
const OPAQUE = /[A-Za-z0-9_+/=-]{20,}/g;
/** Credentials in a URL (`scheme://user:secret@host`). */
const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi;

function maskOpaque(text: string): string {
  return text.replace(OPAQUE, (run) => (/[0-9]/.test(run) && /[A-Za-z]/.test(run) ? REDACTED : run));
}

/**
 * A short, safe reason from an upstream message, or undefined when there is none worth passing
 * on (empty, or markup).
 */
export function upstreamReason(message: unknown, secrets: readonly string[] = [], max = MAX_REASON_CHARS): string | undefined {
  if (typeof message !== 'string') return undefined;
  if (MARKUP.test(message)) return undefined;
  let text = redactText(message, secrets).replace(URL_CREDENTIALS, `$1${REDACTED}@`);
  text = maskOpaque(text).replace(BREAKS, ' ').trim();
  if (!text) return undefined;
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}

/** `HTTP <status>` and the reason when there is one: how an upstream refusal is described. */
export function describeUpstreamAnswer(status: number | undefined, message: unknown, secrets: readonly string[] = []): string {
  const reason = upstreamReason(message, secrets);
  const answered = status !== undefined ? `HTTP ${status}` : 'no HTTP answer';
  return reason ? `${answered}: ${reason}` : MARKUP.test(String(message ?? '')) ? `${answered} (an HTML page, not quoted)` : answered;
}
