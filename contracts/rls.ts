/**
 * Row-level-security rules across environments. Superset keeps them beside datasets and no export
 * carries them, so a migration compares them and a backup keeps them itself.
 */
import type { NextAction } from './outcomes.ts';

/** strict: a difference fails the dashboard; copy: the target gets the source's rules; ignore: recorded, not acted on. */
export const RLS_MODES = ['strict', 'copy', 'ignore'] as const;
export type RlsMode = (typeof RLS_MODES)[number];

/**
 * A rule as compared across environments: roles by name, tables by the dataset they are in the
 * target (its uuid). Only the migrated (or backed-up) datasets count among its tables.
 */
export interface RlsRuleView {
  name: string;
  filter_type: string;
  clause: string;
  group_key: string | null;
  roles: string[];
  tables: Array<{ dataset_uuid: string; table_name: string }>;
  /** Copied with the rule; not compared. */
  description?: string | null;
}

export interface RlsDifference {
  rule: string;
  /** missing_in_target: the source has it; only_in_target: the target has it; differs: both, with `fields` unequal. */
  difference: 'missing_in_target' | 'only_in_target' | 'differs';
  fields?: string[];
  source?: RlsRuleView;
  target?: RlsRuleView;
}

/**
 * One rule written (or, in a dry run, to be written) to the target. not_updated: a same-named
 * target rule whose `fields` differ in a way that may widen access, left as it is (never done
 * without the request's `rls_overwrite`), with the next action.
 */
export interface RlsWrite {
  rule: string;
  action: 'create' | 'update' | 'unchanged' | 'not_updated';
  target_rule_id: number | null;
  done: boolean;
  fields?: string[];
  next_action?: NextAction;
}

/** What a dashboard's migration found and did about row-level security. */
export interface RlsReport {
  mode: RlsMode;
  /** The source's rules on the dashboard's datasets. */
  source_rules: RlsRuleView[];
  /** The target's rules on the datasets the dashboard's datasets are (or will be) there. */
  target_rules: RlsRuleView[];
  differences: RlsDifference[];
  /** mode ignore with differences: the requester chose to import anyway. */
  ignored_by_request?: boolean;
  /** mode copy: rules created or updated in the target. */
  writes?: RlsWrite[];
  /** mode copy: rules only the target has; copying never removes them, since that would widen access. */
  left_in_target?: string[];
  /** Roles the source's rules name that the target lacks. */
  missing_roles?: string[];
}

/** What a backup keeps of row-level security (`row_level_security.yaml` beside the bundle's files). */
export interface RlsBackup {
  version: 1;
  rules: RlsRuleView[];
}
