import { BUILTIN_ROLES } from '../contracts/permissions.ts';
import type { IdentityStores } from '../db/identity/index.ts';
import { createKnex, fillPool, migrateLatest, pendingMigrations, type Knex } from '../db/knex.ts';
import { createStores } from '../db/stores.ts';
import type { Config } from '../lib/config.ts';
import { hashPassword, keyringFor, randomToken } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import { SupersetClientPool } from '../lib/superset/pool.ts';
import { retryPolicyFrom } from '../lib/superset/transport/retry.ts';
import { connectTemporalClient, ensureSearchAttributes } from '../lib/temporal.ts';
import { describeTemporalConnection } from '../lib/temporal-connection.ts';
import { ApiKeyService } from './admin/api-keys.service.ts';
import { AssistantService } from './assistant/service.ts';
import { GroupMappingService } from './admin/group-mappings.service.ts';
import { RoleService } from './admin/roles.service.ts';
import { UserService } from './admin/users.service.ts';
import { OidcService } from './auth/oidc.ts';
import { ADMIN_ROLE } from './auth/principal.ts';
import { SecurityEventService } from './auth/security-events.ts';
import { AuthService } from './auth/service.ts';
import { TokenIssuer } from './auth/tokens.ts';
import { CleanReleaseService } from './clean-release/service.ts';
import type { AppContext } from './context.ts';
import { DashboardService } from './dashboards/service.ts';
import { DatasetReviewService } from './datasets/service.ts';
import { EnvironmentService } from './environments/service.ts';
import { Supersets } from './environments/upstream.ts';
import { createReviewSessionBinder } from './dataset-review/assistant-binder.ts';
import { ReviewService } from './dataset-review/service.ts';
import { GitService } from './git/service.ts';
import { temporalCapturer } from './git/companion-capture.ts';
import { ImpactService } from './impact/service.ts';
import { ProfileService } from './profile/service.ts';
import { ScheduleService } from './schedules/service.ts';
import { HistoryLogReader } from './tasks/history-log.ts';
import { TaskLogService } from './tasks/logs.ts';
import { TaskReconciler } from './tasks/reconciler.ts';
import { TaskService } from './tasks/service.ts';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes.ts';
import { egressPolicy } from '../lib/egress/policy.ts';
import { flushTracing, startTracing } from '../lib/telemetry/tracing.ts';
import { supersetCircuitListener, supersetObserver } from '../lib/telemetry/upstream.ts';
import { SYNCHRONOUS_DEADLINES } from '../lib/superset/transport/options.ts';
import { circuitPolicyFor } from '../lib/superset/transport/circuit.ts';

export interface Bootstrapped {
  context: AppContext;
  reconciler: TaskReconciler;
  close(): Promise<void>;
}

/** Builds the API's context over a new pool on `databaseUrl`: migrations, seeds, Temporal client; nothing listens yet. */
export async function bootstrap(config: Config, logger: Logger, databaseUrl: string): Promise<Bootstrapped> {
  return bootstrapOn(config, logger, createKnex(databaseUrl, { keepWarm: true }));
}

/**
 * The same over a pool the caller made: the test harness, which also reads and arranges rows
 * through it. The pool goes no further than the stores built here; close() ends it.
 */
export async function bootstrapOn(config: Config, logger: Logger, knex: Knex): Promise<Bootstrapped> {
  await migrateOrCheck(config, logger, knex);
  await fillPool(knex);
  const keyring = keyringFor(config, (m) => logger.warn(m));
  const stores = createStores(knex, keyring);
  const { identity } = stores;
  await identity.roles.seedBuiltin(BUILTIN_ROLES);
  await ensureFirstAdmin(identity, config, logger);

  await startTracing(config, 'switchyard-api');
  const temporal = await connectTemporal(config, logger);
  const { context, reconciler } = buildContext({ config, logger, stores, keyring, temporal });
  const { tasks, supersets } = context;
  return {
    context,
    reconciler,
    async close() {
      await reconciler.stop();
      await tasks.drainStarts();
      await temporal.connection.close();
      supersets.close();
      await knex.destroy();
      await flushTracing();
    },
  };
}

/** The Temporal client, with the search attributes the tasks are listed by registered (a namespace that refuses them is logged, not fatal). */
async function connectTemporal(config: Config, logger: Logger): Promise<AppContext['temporal']> {
  const temporal = await connectTemporalClient(config);
  logger.info({ temporal: describeTemporalConnection(config) }, 'connected to Temporal');
  const added = await ensureSearchAttributes(temporal, config.TEMPORAL_NAMESPACE, SEARCH_ATTRIBUTES).catch((err: unknown) => {
    logger.warn({ err }, 'could not register search attributes (is the namespace reachable?)');
    return [];
  });
  if (added.length) logger.info({ added }, 'registered Temporal search attributes');
  return temporal;
}

/** What every service is built over. */
type Foundation = Pick<AppContext, 'config' | 'logger' | 'stores' | 'keyring' | 'temporal'>;

/** Every service of the API, built once over the foundation (the one place that builds them), and the task reconciler. */
function buildContext(base: Foundation): { context: AppContext; reconciler: TaskReconciler } {
  const { config, logger, stores, temporal } = base;
  const people = identityServices(base);
  const profiles = new ProfileService({ store: stores.profiles });
  const tasks = new TaskService({ store: stores.tasks, environments: stores.environments, temporal, config, logger, pairs: stores });
  const taskLogs = new TaskLogService({ store: stores.tasks, history: new HistoryLogReader(temporal), logger });
  const reconciler = new TaskReconciler({
    store: stores.tasks,
    temporal,
    tasks,
    logger,
    afterSeconds: config.TASK_RECONCILE_AFTER_SECONDS,
  });
  const supersets = synchronousSupersets(config, logger, stores);
  const environments = new EnvironmentService({
    store: stores.environments,
    supersets,
    logger,
    events: people.securityEvents,
    egress: egressPolicy(config),
  });
  const git = new GitService({
    configs: stores.gitConfigs,
    repos: stores.gitRepositories,
    profiles: stores.profiles,
    config,
    environments: stores.environments,
    supersets,
    logger,
    companions: temporalCapturer(temporal, config.TEMPORAL_TASK_QUEUE),
  });
  const reviews = new ReviewService({ stores, supersets });
  const services: Omit<AppContext, 'assistant'> = {
    ...base,
    ...people,
    profiles,
    tasks,
    taskLogs,
    environments,
    supersets,
    git,
    dashboards: new DashboardService({ profiles, supersets }),
    reviews,
    assistantReviewSessions: createReviewSessionBinder(reviews),
    suggestionReview: new DatasetReviewService({ stores, supersets }),
    impact: new ImpactService({ supersets, stores }),
    schedules: new ScheduleService({ store: stores.schedules, temporal, config, environments: stores.environments }),
    cleanRelease: new CleanReleaseService({ config, logger, stores, tasks, temporal }),
  };
  return { context: withAssistant(services), reconciler };
}

/** Sign-in, the security log and the administration of users, roles, group mappings and API keys. */
function identityServices({ config, logger, stores, keyring }: Foundation) {
  const { identity } = stores;
  const securityEvents = new SecurityEventService(identity.securityEvents);
  const auth = new AuthService({ identity, events: securityEvents, tokens: new TokenIssuer(keyring.jwtKeys) });
  const oidc = config.OIDC_ISSUER ? new OidcService({ config, auth, logger }) : undefined;
  const admin = { identity, events: securityEvents };
  return {
    securityEvents,
    auth,
    oidc,
    users: new UserService(admin),
    roles: new RoleService(admin),
    groupMappings: new GroupMappingService(admin),
    apiKeys: new ApiKeyService(admin),
  };
}

/**
 * The assistant reaches every other service through the context (each operation uses the one it
 * needs), so it is built last, onto the context it is part of; nothing reads it before it is there.
 */
function withAssistant(services: Omit<AppContext, 'assistant'>): AppContext {
  const context = services as AppContext;
  context.assistant = new AssistantService(context, context.assistantReviewSessions);
  return context;
}

/** The API's way to each environment's Superset: pooled clients on the synchronous deadlines. */
function synchronousSupersets(config: Config, logger: Logger, stores: ReturnType<typeof createStores>): Supersets {
  return new Supersets({
    store: stores.environments,
    pool: new SupersetClientPool(stores.environments.connections(), {
      logger: logger.child({ component: 'superset' }),
      egress: egressPolicy(config),
      retry: retryPolicyFrom(config),
      observerFor: supersetObserver,
      // A person waits on these calls: an outage is decided once per environment, and answered at once while it lasts.
      circuit: { policy: circuitPolicyFor(config.SUPERSET_RETRY_ATTEMPTS), listenerFor: supersetCircuitListener },
      deadlines: SYNCHRONOUS_DEADLINES,
    }),
  });
}

/**
 * Migrates at start, or, with DATABASE_MIGRATE_AT_START=false (migrations run once per release by
 * `node scripts/migrate.ts`), refuses a schema that is behind this code rather than serve on it.
 */
async function migrateOrCheck(config: Config, logger: Logger, knex: Knex): Promise<void> {
  if (config.DATABASE_MIGRATE_AT_START) {
    const applied = await migrateLatest(knex);
    if (applied.length) logger.info({ applied }, 'database migrated');
    return;
  }
  const pending = await pendingMigrations(knex);
  if (pending.length) {
    throw new Error(
      `the database schema is behind this release: ${pending.length} migration(s) pending (${pending.slice(0, 3).join(', ')}${pending.length > 3 ? ', …' : ''}); run \`node scripts/migrate.ts\` (DATABASE_MIGRATE_AT_START=false leaves migrations to it)`,
    );
  }
}

/**
 * The first admin: from SWITCHYARD_ADMIN_USERNAME/PASSWORD, else `admin` with a generated
 * password printed once. Only when no user holds the Admin role yet.
 */
async function ensureFirstAdmin(identity: IdentityStores, config: Config, logger: Logger): Promise<void> {
  const adminRole = await identity.roles.byName(ADMIN_ROLE);
  if (!adminRole) throw new Error(`the built-in role ${ADMIN_ROLE} is missing after seeding`);
  if (await identity.roles.hasHolder(adminRole.id)) return;
  const username = config.SWITCHYARD_ADMIN_USERNAME ?? 'admin';
  const generated = !config.SWITCHYARD_ADMIN_PASSWORD;
  const password = config.SWITCHYARD_ADMIN_PASSWORD ?? randomToken(15);
  await identity.transaction(async (tx) => {
    const user =
      (await tx.users.byUsername(username)) ??
      (await tx.users.create({ username, password_hash: await hashPassword(password), display_name: 'Administrator' }));
    await tx.roles.setUserRoles(user.id, [adminRole.id]);
  });
  if (generated) {
    // Printed once on the console, never through the structured log.
    process.stdout.write(
      `\n  First admin account created: username "${username}", password "${password}"\n  (set SWITCHYARD_ADMIN_USERNAME / SWITCHYARD_ADMIN_PASSWORD to choose them)\n\n`,
    );
  } else {
    logger.info({ username }, 'first admin account created from SWITCHYARD_ADMIN_USERNAME');
  }
}
