/** Migrating and backing up dashboards: tasks of the registry's kinds, built by their routes' own input builders. */
import type { ParseResult } from '../../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../../lib/assistant/operation-texts.ts';
import { backupInput } from '../../backups/input.ts';
import { backupBody } from '../../backups/schemas.ts';
import { migrateBody, migrationInput } from '../../dashboard-migration/input.ts';
import { Clarification, resolveDashboards, resolveEnvironment } from '../resolve.ts';
import { requestBody } from './support.ts';
import { defineOperation, startsTask, type OperationContext, type Plan } from './types.ts';

async function migrate({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const source = resolveEnvironment(lang, e.source_environment!, envs);
  const target = resolveEnvironment(lang, e.target_environment!, envs);
  if (source.id === target.id) throw new Clarification(OPERATION_TEXTS.sameEnvironments[lang](), { invalid: 'target_environment' });
  const ds = await resolveDashboards(lang, app.supersets, source.id, e.dashboards!);
  const { input, params } = migrationInput(
    requestBody(lang, migrateBody, {
      source_env_id: source.id,
      target_env_id: target.id,
      dashboard_ids: ds.map((d) => d.id),
      db_mappings: e.db_mappings ?? [],
      dry_run: e.dry_run === true,
    }),
  );
  const pairs = input.dbMappings.map((m) => `#${m.source_database_id} → #${m.target_database_id}`).join(', ');
  const databases = input.dbMappings.length ? OPERATION_TEXTS.databases[lang](pairs) : '';
  const summary = (input.dryRun ? OPERATION_TEXTS.dryRun : OPERATION_TEXTS.migrate)[lang](ds, source.name, target.name, databases);
  return {
    kind: 'act',
    action: { type: 'task', kind: 'migration', input, params },
    summary,
    resolved: { ...e, source_environment: source, target_environment: target, dashboards: ds },
  };
}

async function backup({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const ds = await resolveDashboards(lang, app.supersets, where.id, e.dashboards!);
  const { input, params } = backupInput(requestBody(lang, backupBody, { env_id: where.id, dashboard_ids: ds.map((d) => d.id) }));
  return {
    kind: 'act',
    action: { type: 'task', kind: 'backup', input, params },
    summary: OPERATION_TEXTS.backup[lang](ds, where.name),
    resolved: { ...e, environment: where, dashboards: ds },
  };
}

export const dashboardsMigrate = defineOperation('dashboards.migrate', { access: startsTask('migration'), plan: migrate });
export const dashboardsBackup = defineOperation('dashboards.backup', { access: startsTask('backup'), plan: backup });
