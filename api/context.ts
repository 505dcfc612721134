import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import type { OidcService } from './auth/oidc.ts';
import type { AuthService } from './auth/service.ts';
import type { EnvironmentService } from './environments/service.ts';
import type { GitService } from './git/service.ts';
import type { TaskLogService } from './tasks/logs.ts';
import type { TaskService } from './tasks/service.ts';

/** Everything a route factory may use; built once in bootstrap.ts (no singletons elsewhere). */
export interface AppContext {
  config: Config;
  knex: Knex;
  temporal: Client;
  logger: Logger;
  keyring: Keyring;
  auth: AuthService;
  /** Present only when OIDC_ISSUER is set. */
  oidc?: OidcService;
  tasks: TaskService;
  taskLogs: TaskLogService;
  /** Superset environments and their pooled clients. */
  environments: EnvironmentService;
  /** Git configs and dashboard repositories. */
  git: GitService;
}
