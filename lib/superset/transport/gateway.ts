/**
 * Answers that came from what stands in front of Superset (nginx, a load balancer) rather than
 * from Superset: a 502/503/504 without Superset's JSON, or an HTML page where JSON was expected.
 * They are named by what came back ("nginx answered 504 Gateway Time-out after 60 s"): the
 * server from its `Server` header (or the signature line nginx prints under its pages), the
 * page's <title> or first <h1> read by an HTML parser, and how long the answer took. The page
 * itself is never quoted beyond that title.
 */
import { STATUS_CODES } from 'node:http';
import { Parser } from 'htmlparser2';
import { upstreamReason } from '../../upstream-reason.ts';
import type { GatewayAnswer } from '../errors.ts';
import { tryJson, type WireResponse } from './wire.ts';

/** Statuses a proxy answers when the worker behind it is slow, restarting or gone. */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

/** Only the head of a page is parsed: a title lives there, and an error page is small. */
const MAX_PARSED_BYTES = 64 * 1024;

/** An HTML page (by its content type, or by its first character when the type is missing or wrong). */
export function isHtml(res: WireResponse): boolean {
  const type = String(res.headers['content-type'] ?? '');
  if (/html/i.test(type)) return true;
  const head = res.body.toString('utf8', 0, Math.min(res.body.length, 256)).trimStart();
  return head.startsWith('<');
}

/** A gateway's answer: 502/503/504 without a JSON body, or an HTML page at any status. */
export function isGatewayAnswer(res: WireResponse): boolean {
  if (isHtml(res)) return true;
  return GATEWAY_STATUSES.has(res.status) && tryJson(res.body) === undefined;
}

/** The page's <title>, else its first <h1>, as plain text. */
export function pageHeading(html: string): { title?: string; h1?: string; signature?: string } {
  const found: { title?: string; h1?: string; signature?: string } = {};
  let inside: 'title' | 'h1' | 'center' | undefined;
  let text = '';
  const parser = new Parser(
    {
      onopentag(name) {
        if ((name === 'title' && found.title === undefined) || (name === 'h1' && found.h1 === undefined) || name === 'center') {
          inside = name;
          text = '';
        }
      },
      ontext(data) {
        if (inside) text += data;
      },
      onclosetag(name) {
        if (name !== inside) return;
        const value = text.replace(/\s+/g, ' ').trim();
        if (value) {
          if (name === 'center') found.signature = value;
          else found[name] ??= value;
        }
        inside = undefined;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.end(html);
  return found;
}

/** The product name of a `Server` header ("nginx/1.25.3" → "nginx"). */
function serverName(header: unknown): string | undefined {
  const first = String(header ?? '')
    .trim()
    .split(/[\s/]/, 1)[0];
  return first && /^[A-Za-z][A-Za-z0-9._-]{0,40}$/.test(first) ? first : undefined;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The status in words: the page's own heading when it names the status (nginx: "504 Gateway Time-out"), else the standard phrase and what the page is called. */
function what(res: WireResponse, heading: string | undefined): string {
  if (heading?.startsWith(String(res.status))) return heading.slice(String(res.status).length).trim() || STATUS_CODES[res.status] || '';
  const phrase = GATEWAY_STATUSES.has(res.status) ? `${STATUS_CODES[res.status]} ` : '';
  if (heading) return `${phrase}with an HTML page titled '${heading}'`;
  return isHtml(res) ? `${phrase}with an HTML page` : phrase.trim() || 'without a JSON body';
}

/** What the gateway answered, with a sentence naming it. */
export function describeGatewayAnswer(res: WireResponse): GatewayAnswer {
  const html = isHtml(res) ? pageHeading(res.body.toString('utf8', 0, Math.min(res.body.length, MAX_PARSED_BYTES))) : {};
  const signature = html.signature && /^[A-Za-z][\w./ -]{0,60}$/.test(html.signature) ? serverName(html.signature) : undefined;
  const server = serverName(res.headers.server) ?? signature;
  const heading = upstreamReason(html.title ?? html.h1, [], 100);
  const elapsed = res.elapsedMs !== undefined ? ` after ${seconds(res.elapsedMs)}` : '';
  const answer = `${server ?? 'the gateway'} answered ${res.status} ${what(res, heading)}${elapsed}`;
  return { server, status: res.status, title: heading, elapsedMs: res.elapsedMs, answer };
}
