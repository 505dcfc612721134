import { EnvironmentStore } from '../db/environments/store.ts';
import { createKnex, migrateLatest } from '../db/knex.ts';
import { TaskStore } from '../db/tasks/store.ts';
import { findUserByUsername, seedBuiltinRoles, setUserRoles } from '../db/identity/repository.ts';
import type { Config } from '../lib/config.ts';
import { hashPassword, Keyring, loadSecret, randomToken } from '../lib/crypto.ts';
import type { Logger } from '../lib/logger.ts';
import { SupersetClientPool } from '../lib/superset/pool.ts';
import { connectTemporalClient, ensureSearchAttributes } from '../lib/temporal.ts';
import { describeTemporalConnection } from '../lib/temporal-connection.ts';
import { OidcService } from './auth/oidc.ts';
import { AuthService } from './auth/service.ts';
import { TokenIssuer } from './auth/tokens.ts';
import type { AppContext } from './context.ts';
import { EnvironmentService } from './environments/service.ts';
import { Supersets } from './environments/upstream.ts';
import { HistoryLogReader } from './tasks/history-log.ts';
import { TaskLogService } from './tasks/logs.ts';
import { TaskReconciler } from './tasks/reconciler.ts';
import { TaskService } from './tasks/service.ts';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes.ts';

export interface Bootstrapped {
  context: AppContext;
  reconciler: TaskReconciler;
  close(): Promise<void>;
}

/** Builds the API's context: migrations, seeds, Temporal client; nothing listens yet. */
export async function bootstrap(config: Config, logger: Logger, databaseUrl: string): Promise<Bootstrapped> {
  const knex = createKnex(databaseUrl);
  const applied = await migrateLatest(knex);
  if (applied.length) logger.info({ applied }, 'database migrated');
  await seedBuiltinRoles(knex);
  await ensureFirstAdmin(knex, config, logger);

  const temporal = await connectTemporalClient(config);
  logger.info({ temporal: describeTemporalConnection(config) }, 'connected to Temporal');
  const added = await ensureSearchAttributes(temporal, config.TEMPORAL_NAMESPACE, SEARCH_ATTRIBUTES).catch((err: unknown) => {
    logger.warn({ err }, 'could not register search attributes (is the namespace reachable?)');
    return [];
  });
  if (added.length) logger.info({ added }, 'registered Temporal search attributes');

  const keyring = new Keyring(loadSecret(config.SWITCHYARD_SECRET_KEY, config.SWITCHYARD_DATA_DIR, (m) => logger.warn(m)));
  const auth = new AuthService({ knex, tokens: new TokenIssuer(keyring.jwtKey) });
  const oidc = config.OIDC_ISSUER ? new OidcService({ config, knex, auth, logger }) : undefined;
  const taskStore = new TaskStore(knex);
  const environmentStore = new EnvironmentStore(knex);
  const tasks = new TaskService({ store: taskStore, environments: environmentStore, temporal, config, logger });
  const taskLogs = new TaskLogService({ store: taskStore, history: new HistoryLogReader(temporal), logger });
  const reconciler = new TaskReconciler({ store: taskStore, temporal, tasks, logger, afterSeconds: config.TASK_RECONCILE_AFTER_SECONDS });

  const supersets = new Supersets({
    store: environmentStore,
    keyring,
    pool: new SupersetClientPool(environmentStore.connections(keyring), { logger: logger.child({ component: 'superset' }) }),
  });
  const environments = new EnvironmentService({ store: environmentStore, supersets, knex, keyring, logger });

  const context: AppContext = {
    config,
    knex,
    temporal,
    logger,
    keyring,
    auth,
    oidc,
    tasks,
    taskLogs,
    environmentStore,
    environments,
    supersets,
  };
  return {
    context,
    reconciler,
    async close() {
      await reconciler.stop();
      await tasks.drainStarts();
      await temporal.connection.close();
      supersets.close();
      await knex.destroy();
    },
  };
}

/**
 * The first admin: from SWITCHYARD_ADMIN_USERNAME/PASSWORD, else `admin` with a generated
 * password printed once. Only when no user holds the Admin role yet.
 */
async function ensureFirstAdmin(knex: AppContext['knex'], config: Config, logger: Logger): Promise<void> {
  const adminRole = await knex('roles').where({ name: 'Admin' }).first();
  const hasAdmin = await knex('user_roles').where({ role_id: adminRole.id }).first();
  if (hasAdmin) return;
  const username = config.SWITCHYARD_ADMIN_USERNAME ?? 'admin';
  const generated = !config.SWITCHYARD_ADMIN_PASSWORD;
  const password = config.SWITCHYARD_ADMIN_PASSWORD ?? randomToken(15);
  await knex.transaction(async (trx) => {
    let user = await findUserByUsername(trx, username);
    if (!user) {
      [user] = await trx('users')
        .insert({ username, password_hash: await hashPassword(password), display_name: 'Administrator' })
        .returning('*');
    }
    await setUserRoles(trx, user!.id, [adminRole.id]);
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
