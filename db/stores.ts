/**
 * Every store, built once over one connection pool: the API (api/bootstrap.ts) and the worker
 * (worker/main.ts, scripts/all-in-one.ts) each call `createStores` once and hand the result on;
 * routes, services and activities take their stores from it instead of a connection. The pool
 * itself stays in db/ (the import rules refuse `knex` anywhere else): a change that spans stores
 * opens its transaction through `transaction` and passes it to the store methods that take one.
 */
import type { Knex } from 'knex';
import type { Keyring } from '../lib/crypto.ts';
import { AuditStore } from './assistant/audit.ts';
import { ConfirmationStore } from './assistant/confirmations.ts';
import { ConversationStore } from './assistant/conversations.ts';
import { BackupIndexStore } from './backups/store.ts';
import { BrowserScreenshotStore } from './browser-check/screenshots.ts';
import { CleanReleaseStore } from './clean-release/store.ts';
import { ReviewClarificationStore } from './dataset-review/clarifications.ts';
import { ReviewLaunchStore } from './dataset-review/launches.ts';
import { SemanticDictionaryStore } from './dataset-review/dictionaries.ts';
import { ReviewFieldStore } from './dataset-review/fields.ts';
import { ReviewMappingStore } from './dataset-review/mappings.ts';
import { ReviewSessionStore } from './dataset-review/sessions.ts';
import { DatasetChangeStore } from './datasets/changes.ts';
import { DictionaryStore } from './datasets/dictionaries.ts';
import { SuggestionStore } from './datasets/suggestions.ts';
import { DatabaseMappingStore } from './environments/mappings.ts';
import { EnvironmentRuleStore } from './environments/rules.ts';
import { EnvironmentStore } from './environments/store.ts';
import { GitConfigStore } from './git/configs.ts';
import { GitRepositoryStore } from './git/repositories.ts';
import { GitReviewStore } from './git/reviews.ts';
import { DatabaseHealthStore } from './health.ts';
import { IdentityStores } from './identity/index.ts';
import { LlmProviderStore } from './llm-providers/store.ts';
import { MigrationItemsStore } from './dashboard-migration/items.ts';
import { MigrationStateStore } from './dashboard-migration/store.ts';
import { ProfileStore } from './profile/store.ts';
import { ScheduleStore } from './schedules/store.ts';
import { SelfcheckEffectStore } from './selfcheck/store.ts';
import { TaskItemPages } from './tasks/item-pages.ts';
import { TaskItemStore } from './tasks/items.ts';
import { TaskStore } from './tasks/store.ts';
import { ValidationVerdictStore } from './validation/verdicts.ts';

/** A transaction opened by `Stores.transaction`, for the store methods that take one (never used as a query builder outside db/). */
export type Transaction = Knex.Transaction;

export interface Stores {
  /** The readiness probe's and the selfcheck's look at the database itself. */
  database: DatabaseHealthStore;
  /** Runs `work` in one transaction (committed when it resolves), for a change spanning several stores' methods. */
  transaction<T>(work: (trx: Transaction) => Promise<T>): Promise<T>;
  /** Users, roles, sessions, API keys, sign-in state, security events; `identity.transaction` binds them all. */
  identity: IdentityStores;
  profiles: ProfileStore;
  tasks: TaskStore;
  /** The items of tasks that keep them outside their workflow (`task_items`). */
  taskItems: TaskItemStore;
  /** A task's items a page at a time, filtered, and their counts (read-only). */
  taskItemPages: TaskItemPages;
  environments: EnvironmentStore;
  /** Accepted database mappings between two environments. */
  databaseMappings: DatabaseMappingStore;
  /** Per-environment rules of each pair (schema/catalog renames, text and URL rules). */
  environmentRules: EnvironmentRuleStore;
  /** Git configs; their tokens are encrypted and decrypted with the keyring given to `createStores`. */
  gitConfigs: GitConfigStore;
  gitRepositories: GitRepositoryStore;
  /** Pull requests Switchyard opened, config webhooks (secret encrypted) and their deliveries. */
  gitReviews: GitReviewStore;
  llmProviders: LlmProviderStore;
  schedules: ScheduleStore;
  /** The backup index (the blobs live in the configured backup store). */
  backups: BackupIndexStore;
  datasetChanges: DatasetChangeStore;
  datasetSuggestions: SuggestionStore;
  /** Uploaded or queried column dictionaries of column-mapping tasks. */
  datasetDictionaries: DictionaryStore;
  /** Dataset review sessions and what hangs off them. */
  review: {
    sessions: ReviewSessionStore;
    fields: ReviewFieldStore;
    mappings: ReviewMappingStore;
    clarifications: ReviewClarificationStore;
    dictionaries: SemanticDictionaryStore;
    /** The audit record of each accepted launch. */
    launches: ReviewLaunchStore;
  };
  cleanRelease: CleanReleaseStore;
  /** What each migration left in a target. */
  migrationStates: MigrationStateStore;
  /** Import intents, written before an import and confirmed after it. */
  migrationItems: MigrationItemsStore;
  /** The browser check's screenshots, per task, dashboard and side. */
  browserScreenshots: BrowserScreenshotStore;
  selfcheckEffects: SelfcheckEffectStore;
  /** What the content validator found last time, per dashboard and chart (first seen broken, last passed). */
  validationVerdicts: ValidationVerdictStore;
  assistant: {
    conversations: ConversationStore;
    confirmations: ConfirmationStore;
    audit: AuditStore;
  };
}

/** Every store over `knex`, once; `keyring` encrypts and decrypts what stores keep secret (passwords, tokens, keys). */
export function createStores(knex: Knex, keyring: Keyring): Stores {
  return {
    database: new DatabaseHealthStore(knex),
    transaction: (work) => knex.transaction(work),
    identity: new IdentityStores(knex),
    profiles: new ProfileStore(knex),
    tasks: new TaskStore(knex),
    taskItems: new TaskItemStore(knex),
    taskItemPages: new TaskItemPages(knex),
    environments: new EnvironmentStore(knex, keyring),
    databaseMappings: new DatabaseMappingStore(knex),
    environmentRules: new EnvironmentRuleStore(knex),
    gitConfigs: new GitConfigStore(knex, keyring),
    gitRepositories: new GitRepositoryStore(knex),
    gitReviews: new GitReviewStore(knex, keyring),
    llmProviders: new LlmProviderStore(knex, keyring),
    schedules: new ScheduleStore(knex),
    backups: new BackupIndexStore(knex),
    datasetChanges: new DatasetChangeStore(knex),
    datasetSuggestions: new SuggestionStore(knex),
    datasetDictionaries: new DictionaryStore(knex),
    review: {
      sessions: new ReviewSessionStore(knex),
      fields: new ReviewFieldStore(knex),
      mappings: new ReviewMappingStore(knex),
      clarifications: new ReviewClarificationStore(knex),
      dictionaries: new SemanticDictionaryStore(knex),
      launches: new ReviewLaunchStore(knex),
    },
    cleanRelease: new CleanReleaseStore(knex),
    migrationStates: new MigrationStateStore(knex),
    migrationItems: new MigrationItemsStore(knex),
    browserScreenshots: new BrowserScreenshotStore(knex),
    selfcheckEffects: new SelfcheckEffectStore(knex),
    validationVerdicts: new ValidationVerdictStore(knex),
    assistant: {
      conversations: new ConversationStore(knex),
      confirmations: new ConfirmationStore(knex),
      audit: new AuditStore(knex),
    },
  };
}
