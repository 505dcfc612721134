import type { Knex } from 'knex';
import type { EnvRule, EnvRuleKind } from '../../contracts/env-rules.ts';

/** One stored rule of an environment pair (see contracts/env-rules.ts). */
export interface EnvironmentRuleRow {
  id: string;
  source_env_id: string;
  target_env_id: string;
  position: number;
  kind: EnvRuleKind;
  from_value: string;
  to_value: string;
  description: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface EnvironmentRuleInput {
  kind: EnvRuleKind;
  from: string;
  to: string;
  description?: string | null;
}

/** The `environment_rules` table: each pair's per-environment rules, in the order they apply. */
export class EnvironmentRuleStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  /** The pair's rules in the order they apply. */
  list(sourceEnvId: string, targetEnvId: string): Promise<EnvironmentRuleRow[]> {
    return this.knex<EnvironmentRuleRow>('environment_rules')
      .where({ source_env_id: sourceEnvId, target_env_id: targetEnvId })
      .orderBy('position');
  }

  /** The environments `sourceEnvId` has rules into (what impact calls the environments it migrates to). */
  async targetsOf(sourceEnvId: string): Promise<string[]> {
    const rows = await this.knex('environment_rules').distinct('target_env_id').where({ source_env_id: sourceEnvId });
    return rows.map((r: { target_env_id: string }) => r.target_env_id);
  }

  /** The pair's rules as the bundle rewrite takes them. */
  async rulesFor(sourceEnvId: string, targetEnvId: string): Promise<EnvRule[]> {
    return (await this.list(sourceEnvId, targetEnvId)).map(toRule);
  }

  /** Appends a rule to the pair's list. */
  async add(sourceEnvId: string, targetEnvId: string, rule: EnvironmentRuleInput, userId: string | null): Promise<EnvironmentRuleRow> {
    return this.knex.transaction(async (trx) => {
      // The pair's rows are locked so two additions never take the same position.
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`environment_rules:${sourceEnvId}:${targetEnvId}`]);
      const last = await trx('environment_rules')
        .where({ source_env_id: sourceEnvId, target_env_id: targetEnvId })
        .max('position as max')
        .first();
      const [row] = await trx<EnvironmentRuleRow>('environment_rules')
        .insert({
          source_env_id: sourceEnvId,
          target_env_id: targetEnvId,
          position: Number((last as { max: number | null } | undefined)?.max ?? -1) + 1,
          kind: rule.kind,
          from_value: rule.from,
          to_value: rule.to,
          description: rule.description ?? null,
          created_by: userId,
          updated_by: userId,
        })
        .returning('*');
      return row!;
    });
  }

  /** The rule with this id in this pair, or undefined. */
  get(sourceEnvId: string, targetEnvId: string, id: string): Promise<EnvironmentRuleRow | undefined> {
    return this.knex<EnvironmentRuleRow>('environment_rules').where({ id, source_env_id: sourceEnvId, target_env_id: targetEnvId }).first();
  }

  /** Changes a rule in place (its position kept); undefined when the pair has no such rule. */
  async update(
    sourceEnvId: string,
    targetEnvId: string,
    id: string,
    rule: EnvironmentRuleInput,
    userId: string | null,
  ): Promise<EnvironmentRuleRow | undefined> {
    const [row] = await this.knex<EnvironmentRuleRow>('environment_rules')
      .where({ id, source_env_id: sourceEnvId, target_env_id: targetEnvId })
      .update({
        kind: rule.kind,
        from_value: rule.from,
        to_value: rule.to,
        description: rule.description ?? null,
        updated_by: userId,
        updated_at: this.knex.fn.now() as unknown as Date,
      })
      .returning('*');
    return row;
  }

  /** Removes a rule; false when the pair has no such rule. */
  async remove(sourceEnvId: string, targetEnvId: string, id: string): Promise<boolean> {
    return (await this.knex('environment_rules').where({ id, source_env_id: sourceEnvId, target_env_id: targetEnvId }).delete()) > 0;
  }
}

export function toRule(r: EnvironmentRuleRow): EnvRule {
  return { id: r.id, kind: r.kind, from: r.from_value, to: r.to_value };
}
