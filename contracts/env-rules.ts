/**
 * Per-environment rules: what differs between two environments besides their databases. Stored
 * per (source, target) pair next to the database mappings and applied to a bundle before it is
 * written into the target (migration, git deploy, release publish, and the drift report's dry run).
 * lib/bundles/env-rules.ts, which applies them, states the same shapes for itself (lib imports
 * nothing of the project); the compiler holds the two together where outcomes are built.
 */

/**
 * schema: a schema renamed, in datasets' `schema` and in virtual datasets' SQL (parsed);
 * catalog: the same for a catalog;
 * text: a literal replaced in markdown, chart params and dashboard metadata; a `from` that is an
 * http(s) URL matches links by origin (and path prefix) instead of by text.
 */
export type EnvRuleKind = 'schema' | 'catalog' | 'text';

export const ENV_RULE_KINDS: readonly EnvRuleKind[] = ['schema', 'catalog', 'text'];

export interface EnvRule {
  id: string;
  kind: EnvRuleKind;
  from: string;
  to: string;
}

/** One field a rule changed (or, in a dry run, would change). */
export interface EnvRuleChange {
  /** What the file describes, e.g. `dataset "orders"`. */
  object: string;
  file: string;
  /** Dotted path in the file, e.g. `sql`, `position.MARKDOWN-x1.meta.code`, `params.subheader`. */
  field: string;
  before: string | null;
  after: string | null;
}

/** A field the rule could not read, left as it was (e.g. SQL its dialect's parser refuses). */
export interface EnvRuleSkip {
  object: string;
  file: string;
  field: string;
  reason: string;
}

/** What one rule did to one bundle. */
export interface EnvRuleEffect {
  id: string;
  kind: EnvRuleKind;
  from: string;
  to: string;
  /** Occurrences replaced (references, links, literal matches, schema/catalog fields). */
  matched: number;
  objects: EnvRuleChange[];
  unreadable: EnvRuleSkip[];
  /** Set when the rule matched nothing, so a rule that no longer fits is seen. */
  note?: string;
}

/** A saved database mapping of a pair, as a frozen snapshot carries it (names and uuids: a release maps by them). */
export interface FrozenDbMapping {
  source_database_id: number;
  source_database_name: string;
  source_database_uuid: string | null;
  target_database_id: number;
}

/**
 * The rules and saved database mappings of an environment pair as a task or release will apply
 * them, frozen when it was requested (a task's input) or its manifest built: what the approver
 * sees, and what a run applies. `source_env_id` null: no pair applies (no rules, no mappings).
 * Rules and mappings hold no secret.
 */
export interface PairSettings {
  source_env_id: string | null;
  target_env_id: string;
  rules: EnvRule[];
  db_mappings: FrozenDbMapping[];
  /** sha256 over the pair, its rules and mappings: a run compares it with the stored ones'. */
  digest: string;
}
