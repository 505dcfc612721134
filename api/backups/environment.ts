import type { Knex } from 'knex';
import { isUuid } from '../../db/backups/repository.ts';
import { NotFoundError } from '../../lib/errors.ts';

/** 404 for an environment that does not exist; an id that is not even a UUID cannot exist either. */
export async function assertEnvironmentExists(knex: Knex, envId: string, what = 'Environment'): Promise<{ id: string; name: string }> {
  const env = isUuid(envId) ? await knex('environments').where({ id: envId }).first('id', 'name') : undefined;
  if (!env) throw new NotFoundError(what, envId);
  return env;
}
