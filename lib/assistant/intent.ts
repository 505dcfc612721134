/**
 * What the assistant's parser reads from a command: the intent (domain, operation, entities, and
 * how risky the operation is), the language of the question and what is still missing.
 */
export type Language = 'ru' | 'en';
export type Domain = 'help' | 'dashboards' | 'datasets' | 'tasks' | 'git' | 'dataset_review' | 'unknown';
export type Operation =
  | 'capabilities'
  | 'list'
  | 'search'
  | 'status'
  | 'logs'
  | 'migrate'
  | 'backup'
  | 'generate_docs'
  | 'commit'
  | 'deploy'
  | 'open_pr'
  | 'show'
  | 'set_field'
  | 'approve_mappings'
  | 'answer'
  | 'validate'
  | 'impact'
  | 'unsupported'
  | 'unknown';
/** `safe`: reads only; `low`: a task that changes nothing (dry run); `medium`: writes outside Superset; `high`: changes Superset. */
export type RiskLevel = 'safe' | 'low' | 'medium' | 'high';

/** A dashboard or dataset as named in the text: its id, or a title / slug / table name. */
export type ObjectRef = number | string;

export interface Entities {
  environment?: string;
  source_environment?: string;
  target_environment?: string;
  dashboards?: ObjectRef[];
  datasets?: ObjectRef[];
  query?: string;
  task_id?: string;
  latest?: boolean;
  dry_run?: boolean;
  message?: string;
  commit?: string;
  language?: Language;
  /** Migration: databases named in the text ("база 3 → 7", "database 3 to 7"), source id → target id. */
  db_mappings?: Array<{ source_database_id: number; target_database_id: number }>;
  /** Dataset review: the field named ("поле region"), its new meaning, an answer to the current question. */
  field?: string;
  label?: string;
  answer?: string;
  /** The word that names an unsupported operation. */
  verb?: string;
}

export interface Intent {
  domain: Domain;
  operation: Operation;
  entities: Entities;
  confidence: number;
  risk_level: RiskLevel;
  requires_confirmation: boolean;
}

export type MissingParameter =
  | 'environment'
  | 'source_environment'
  | 'target_environment'
  | 'dashboards'
  | 'datasets'
  | 'query'
  | 'task_id'
  | 'message'
  | 'field'
  | 'label'
  | 'answer';

export interface ParseResult {
  intent: Intent;
  language: Language;
  /** Parameters the operation needs and the text does not give. */
  missing: MissingParameter[];
  /** Keywords read with one wrong letter: [as written, as read]. */
  corrections: Array<[string, string]>;
}

export interface KnownEnvironment {
  id: string;
  name: string;
}

export interface ParseContext {
  environments?: readonly KnownEnvironment[];
}
