/**
 * Applies an environment pair's rules (contracts/env-rules.ts) to a bundle before it is written
 * into the target: the one place they take effect, for migrations, git deploys, release publishes
 * and the drift report alike. Each rule answers what it changed, field by field, and a rule that
 * matched nothing says so.
 */
import LinkifyIt from 'linkify-it';
import { AppError } from '../errors.ts';
import { identifierProblem } from '../sql/identifier.ts';
import { dialectOfUri, renameQualifier } from '../sql/qualifiers.ts';
import type { Bundle, BundleFile } from './bundle.ts';
import { describe } from './rewrite.ts';

/**
 * A rule and what it did, as this module reads and answers them. lib/ imports nothing of the
 * project, so contracts/env-rules.ts states the same shapes for the outcomes; the compiler holds
 * them together where an activity puts these answers into an outcome.
 */
export interface EnvRule {
  id: string;
  kind: 'schema' | 'catalog' | 'text';
  from: string;
  to: string;
}
export interface EnvRuleChange {
  object: string;
  file: string;
  field: string;
  before: string | null;
  after: string | null;
}
export interface EnvRuleSkip {
  object: string;
  file: string;
  field: string;
  reason: string;
}
export interface EnvRuleEffect extends EnvRule {
  matched: number;
  objects: EnvRuleChange[];
  unreadable: EnvRuleSkip[];
  note?: string;
}

type Rec = Record<string, unknown>;
// A YAML key may be `__proto__`; writing through it would reach Object.prototype.
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const isRec = (v: unknown): v is Rec => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A rule that may not take effect: one the checks at creation would refuse (it reached the store
 * another way), a rewrite that does not read back as the same query, or a text rule that would
 * grow the bundle past its bound. The item fails with it, before anything is written; an
 * activity's failure mapping reads `next_actions` from it.
 */
export class EnvRuleRefusedError extends AppError {
  override name = 'EnvRuleRefusedError';
  constructor(rule: Pick<EnvRule, 'id' | 'kind' | 'from'>, why: string) {
    super(
      422,
      'env_rule_refused',
      'Rule refused',
      `per-environment ${rule.kind} rule ${rule.id} (from '${rule.from.slice(0, 80)}') ${why}; nothing was written`,
      {
        extra: {
          next_actions: [
            {
              action: 'fix_env_rule',
              description: `Change or remove rule ${rule.id} of this environment pair (GET /api/environments/{env_id}/rules/{target_env_id} lists them), then run this again`,
            },
          ],
        },
      },
    );
  }
}

/**
 * Applies `rules` in order to `bundle` (in place); one effect per rule, in the same order. Throws
 * EnvRuleRefusedError, with the bundle possibly half rewritten (the caller writes none of it),
 * for a rule that may not take effect.
 */
export function applyEnvRules(bundle: Bundle, rules: readonly EnvRule[]): EnvRuleEffect[] {
  for (const rule of rules) {
    const problems = ruleProblems(rule);
    if (problems.length)
      throw new EnvRuleRefusedError(rule, `is not a valid rule: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
  }
  const budget = new ExpansionBudget();
  return rules.map((rule) => {
    const effect: EnvRuleEffect = { id: rule.id, kind: rule.kind, from: rule.from, to: rule.to, matched: 0, objects: [], unreadable: [] };
    if (rule.kind === 'text') applyText(bundle, rule, effect, budget);
    else applyQualifier(bundle, rule, effect);
    if (effect.matched === 0) effect.note = `matched nothing in this dashboard's bundle`;
    return effect;
  });
}

/** A schema or catalog rule: the datasets' own field, and the references in a virtual dataset's SQL. */
function applyQualifier(bundle: Bundle, rule: EnvRule, effect: EnvRuleEffect): void {
  const level = rule.kind === 'catalog' ? 'catalog' : 'schema';
  const uriByDb = new Map(bundle.of('databases').map((f) => [String(f.content.uuid), f.content.sqlalchemy_uri]));
  for (const f of bundle.of('datasets')) {
    const c = f.content;
    if (c[level] === rule.from) {
      c[level] = rule.to;
      change(effect, f, level, rule.from, rule.to, 1);
    }
    if (typeof c.sql !== 'string' || !c.sql.trim()) continue;
    const dialect = dialectOfUri(uriByDb.get(String(c.database_uuid)));
    if (!dialect) {
      skip(effect, f, 'sql', `no SQL parser here for its database's dialect: its SQL was left as it was`);
      continue;
    }
    const r = renameQualifier(dialect, c.sql, level, rule.from, rule.to);
    if (!r.ok && r.refused) throw new EnvRuleRefusedError(rule, `cannot rewrite the SQL of ${describe(f)}: ${r.reason}`);
    if (!r.ok) skip(effect, f, 'sql', `${r.reason}; its SQL was left as it was`);
    else if (r.count) {
      change(effect, f, 'sql', c.sql, r.sql, r.count);
      c.sql = r.sql;
    }
  }
}

/** A text rule: markdown elements of the dashboard layout, dashboard metadata, chart params. */
function applyText(bundle: Bundle, rule: EnvRule, effect: EnvRuleEffect, budget: ExpansionBudget): void {
  const replace = textReplacer(rule);
  const visit = (f: BundleFile, path: string[], value: unknown, set: (v: string) => void) => {
    if (typeof value !== 'string') return;
    const { text, count } = replace(value);
    if (!count) return;
    if (!budget.spend(value.length, text.length))
      throw new EnvRuleRefusedError(
        rule,
        `would grow the bundle by more than the ${MAX_RULE_BUNDLE_GROWTH_CHARS} characters all rules together may add (at ${path.join('.')} of ${describe(f)})`,
      );
    change(effect, f, path.join('.'), value, text, count);
    set(text);
  };
  for (const f of bundle.of('dashboards')) {
    const position = f.content.position;
    if (isRec(position)) {
      for (const [key, node] of Object.entries(position)) {
        if (!isRec(node) || node.type !== 'MARKDOWN' || !isRec(node.meta)) continue;
        const meta = node.meta;
        visit(f, ['position', key, 'meta', 'code'], meta.code, (v) => (meta.code = v));
      }
    }
    walkStrings(f.content.metadata, ['metadata'], (path, value, set) => visit(f, path, value, set));
  }
  for (const f of bundle.of('charts')) walkStrings(f.content.params, ['params'], (path, value, set) => visit(f, path, value, set));
}

/**
 * The one bound on how far text rules may grow what they rewrite: a field (the before and after
 * copies of each change are kept for the answer, in a worker with a small heap), and the growth
 * of the whole bundle over all rules.
 */
export const MAX_RULE_FIELD_CHARS = 1_000_000;
export const MAX_RULE_BUNDLE_GROWTH_CHARS = 4_000_000;

/** The bundle's growth so far; a field's own bound is held by textReplacer, before the field is built. */
class ExpansionBudget {
  private grown = 0;

  /** Counts a field going from `before` to `after` characters; false once the bundle has grown past the bound. */
  spend(before: number, after: number): boolean {
    this.grown += Math.max(0, after - before);
    return this.grown <= MAX_RULE_BUNDLE_GROWTH_CHARS;
  }
}

const linkify = new LinkifyIt({}, { fuzzyEmail: false });

/**
 * A literal rule replaces every occurrence of its text. A rule whose `from` is an http(s) URL
 * finds links (linkify-it), reads each with the WHATWG URL parser and rewrites those on the same
 * origin under the same path: `https://dev.example.com` matches `https://DEV.example.com:443/x`
 * but not `https://dev.example.com.evil.io/x`.
 */
type TextRule = Pick<EnvRule, 'from' | 'to'> & { id?: string };

export function textReplacer(rule: TextRule): (text: string) => { text: string; count: number } {
  const base = httpUrl(rule.from);
  if (!base) {
    return (text) => {
      const parts = text.split(rule.from);
      const count = parts.length - 1;
      // Measured before it is built: a string past the bound never exists.
      const length = text.length + count * (rule.to.length - rule.from.length);
      if (length > MAX_RULE_FIELD_CHARS) throw fieldTooLong(rule, length);
      return { text: parts.join(rule.to), count };
    };
  }
  const prefix = base.pathname.replace(/\/$/, '');
  const to = rule.to.replace(/\/$/, '');
  return (text) => {
    const links = linkify.match(text) ?? [];
    let out = '';
    let at = 0;
    let count = 0;
    for (const m of links) {
      if (out.length > MAX_RULE_FIELD_CHARS) throw fieldTooLong(rule, out.length);
      const url = httpUrl(m.url);
      if (!url || url.origin !== base.origin) continue;
      if (prefix && url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) continue;
      out += text.slice(at, m.index) + to + url.href.slice(url.origin.length + prefix.length);
      at = m.lastIndex;
      count++;
    }
    return { text: count ? out + text.slice(at) : text, count };
  };
}

function fieldTooLong(rule: TextRule, length: number): EnvRuleRefusedError {
  return new EnvRuleRefusedError(
    { id: rule.id ?? '(unsaved)', kind: 'text', from: rule.from },
    `would make a field at least ${length} characters long, more than the ${MAX_RULE_FIELD_CHARS} a rule may make one`,
  );
}

function httpUrl(s: string): URL | null {
  if (!URL.canParse(s)) return null;
  const u = new URL(s);
  return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
}

/** Every string under `value` with its dotted path and a setter (own data members only). */
function walkStrings(value: unknown, path: string[], visit: (path: string[], value: string, set: (v: string) => void) => void): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (typeof v === 'string') visit([...path, String(i)], v, (x) => (value[i] = x));
      else walkStrings(v, [...path, String(i)], visit);
    });
    return;
  }
  if (!isRec(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (UNSAFE_KEYS.has(k)) continue;
    if (typeof v === 'string') visit([...path, k], v, (x) => (value[k] = x));
    else walkStrings(v, [...path, k], visit);
  }
}

function change(effect: EnvRuleEffect, f: BundleFile, field: string, before: string, after: string, count: number): void {
  effect.matched += count;
  effect.objects.push({ object: describe(f), file: f.path, field, before, after } satisfies EnvRuleChange);
}

function skip(effect: EnvRuleEffect, f: BundleFile, field: string, reason: string): void {
  effect.unreadable.push({ object: describe(f), file: f.path, field, reason } satisfies EnvRuleSkip);
}

/** What is wrong with a rule as a person wrote it (field → message); empty when it can be stored. */
export function ruleProblems(rule: Pick<EnvRule, 'kind' | 'from' | 'to'>): Array<{ field: 'from' | 'to'; message: string }> {
  const out: Array<{ field: 'from' | 'to'; message: string }> = [];
  if (rule.kind !== 'text') {
    for (const field of ['from', 'to'] as const) {
      const problem = identifierProblem(rule[field]);
      if (problem) out.push({ field, message: `a ${rule.kind} name ${problem}` });
    }
  } else if (!rule.from) out.push({ field: 'from', message: 'the text to replace may not be empty' });
  else if (httpUrl(rule.from) && !httpUrl(rule.to))
    out.push({ field: 'to', message: 'a rule on an http(s) URL rewrites links to another http(s) URL: `to` must be one' });
  if (rule.from === rule.to) out.push({ field: 'to', message: 'must differ from `from`' });
  return out;
}
