/** The frozen rules and saved mappings of a pair (contracts/env-rules.ts PairSettings) as answers show them to an approver. */
import { z } from 'zod';
import { ENV_RULE_KINDS } from '../../contracts/env-rules.ts';

export const pairSettingsView = z
  .object({
    source_env_id: z
      .string()
      .nullable()
      .describe('the environment the content comes from; null: no pair applies (no rules, no saved mappings)'),
    target_env_id: z.string(),
    rules: z
      .array(z.object({ id: z.string(), kind: z.enum(ENV_RULE_KINDS), from: z.string(), to: z.string() }))
      .describe('in the order they apply'),
    db_mappings: z
      .array(
        z.object({
          source_database_id: z.number(),
          source_database_name: z.string(),
          source_database_uuid: z.string().nullable(),
          target_database_id: z.number(),
        }),
      )
      .describe("the pair's saved database mappings"),
    digest: z.string().describe('sha256 over the pair, its rules and mappings'),
  })
  .describe(
    'The per-environment rules and saved database mappings this work applies, frozen when it was requested: a run whose stored rules or mappings no longer digest the same is refused as stale (nothing written), never applied differently',
  );
