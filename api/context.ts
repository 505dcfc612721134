import type { Client } from '@temporalio/client';
import type { Stores } from '../db/stores.ts';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import type { ApiKeyService } from './admin/api-keys.service.ts';
import type { ReviewSessionBinder } from './assistant/binder.ts';
import type { Assistant } from './assistant/assistant.ts';
import type { CleanReleaseService } from './clean-release/service.ts';
import type { GroupMappingService } from './admin/group-mappings.service.ts';
import type { RoleService } from './admin/roles.service.ts';
import type { UserService } from './admin/users.service.ts';
import type { OidcService } from './auth/oidc.ts';
import type { SecurityEventService } from './auth/security-events.ts';
import type { AuthService } from './auth/service.ts';
import type { DashboardService } from './dashboards/service.ts';
import type { DatasetReviewService } from './datasets/service.ts';
import type { ReviewService } from './dataset-review/service.ts';
import type { EnvironmentService } from './environments/service.ts';
import type { GitService } from './git/service.ts';
import type { Supersets } from './environments/upstream.ts';
import type { ImpactService } from './impact/service.ts';
import type { ProfileService } from './profile/service.ts';
import type { ScheduleService } from './schedules/service.ts';
import type { TaskLogService } from './tasks/logs.ts';
import type { TaskService } from './tasks/service.ts';

/** Everything a route factory may use; built once in bootstrap.ts (no singletons elsewhere). */
export interface AppContext {
  config: Config;
  /** Every store, built once (db/stores.ts); the connection pool stays behind them. */
  stores: Stores;
  temporal: Client;
  logger: Logger;
  keyring: Keyring;
  auth: AuthService;
  /** Present only when OIDC_ISSUER is set. */
  oidc?: OidcService;
  securityEvents: SecurityEventService;
  users: UserService;
  roles: RoleService;
  groupMappings: GroupMappingService;
  apiKeys: ApiKeyService;
  profiles: ProfileService;
  tasks: TaskService;
  taskLogs: TaskLogService;
  /** Environment CRUD and the connection test. */
  environments: EnvironmentService;
  /** Git configs and dashboard repositories. */
  git: GitService;
  /** The way to an environment's Superset: look-up, pooled client, failures mapped to 404/503. */
  supersets: Supersets;
  /** Dashboards of an environment (the routes and the assistant). */
  dashboards: DashboardService;
  /** Dataset review sessions (the routes and the assistant's binder). */
  reviews: ReviewService;
  /** Binds assistant messages to dataset review sessions (dataset review provides it; absent: a bound message is 404). */
  assistantReviewSessions?: ReviewSessionBinder;
  /** The assistant: commands parsed, answered, confirmed and started as tasks (the routes). */
  assistant: Assistant;
  /** Suggestions waiting for review and the changes written from them (the dataset routes). */
  suggestionReview: DatasetReviewService;
  /** What uses a database, table, dataset, column or metric (the routes, previews and the assistant). */
  impact: ImpactService;
  /** Recurring backups, drift reports and validations as Temporal Schedules. */
  schedules: ScheduleService;
  /** Release candidates, their checks and decisions. */
  cleanRelease: CleanReleaseService;
}
