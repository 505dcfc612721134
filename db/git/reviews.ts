import type { Knex } from 'knex';
import type { Keyring, SecretBinding } from '../../lib/crypto.ts';
import { reencryptColumn, type SecretColumnCount } from '../secret-column.ts';

export type PullRequestState = 'open' | 'closed' | 'merged';

export interface GitPullRequestRow {
  id: string;
  dashboard_uuid: string;
  config_id: string;
  repository: string;
  number: number;
  url: string;
  title: string;
  head_branch: string;
  base_branch: string;
  head_commit: string | null;
  state: PullRequestState;
  env_id: string;
  dashboard_id: number;
  target_env_id: string;
  verification: 'queries' | 'browser';
  opened_by: string | null;
  preview_task_id: string | null;
  preview_state: string | null;
  merge_commit: string | null;
  deploy_task_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface GitWebhookRow {
  id: string;
  config_id: string;
  secret_encrypted: string;
  owner_id: string;
  created_at: Date;
  updated_at: Date;
}

const SECRET = { table: 'git_webhooks', column: 'secret_encrypted' } as const;
const secretOf = (rowId: string): SecretBinding => ({ ...SECRET, rowId });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The review loop's tables: git_pull_requests (what Switchyard opened, previewed and deployed),
 * git_webhooks (a config's webhook secret, encrypted and bound to its row, decrypted only by
 * `secret()`; the person it acts as) and git_webhook_deliveries (each delivery once).
 */
export class GitReviewStore {
  private readonly knex: Knex;
  private readonly keyring: Keyring;

  constructor(knex: Knex, keyring: Keyring) {
    this.knex = knex;
    this.keyring = keyring;
  }

  async createPullRequest(
    row: Omit<
      GitPullRequestRow,
      'id' | 'created_at' | 'updated_at' | 'preview_task_id' | 'preview_state' | 'merge_commit' | 'deploy_task_id' | 'state'
    >,
  ) {
    const [saved] = await this.knex<GitPullRequestRow>('git_pull_requests').insert(row).returning('*');
    return saved;
  }

  async pullRequest(id: string): Promise<GitPullRequestRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.knex<GitPullRequestRow>('git_pull_requests').where({ id }).first();
  }

  async pullRequestByNumber(dashboardUuid: string, number: number): Promise<GitPullRequestRow | undefined> {
    return this.knex<GitPullRequestRow>('git_pull_requests')
      .where({ dashboard_uuid: dashboardUuid, number })
      .orderBy('created_at', 'desc')
      .first();
  }

  /** The pull request a provider's event names: by config, repository (case as the server spells it) and number. */
  async pullRequestOf(configId: string, repository: string, number: number): Promise<GitPullRequestRow | undefined> {
    return this.knex<GitPullRequestRow>('git_pull_requests')
      .where({ config_id: configId, number })
      .whereRaw('lower(repository) = lower(?)', [repository])
      .first();
  }

  async pullRequests(dashboardUuid: string, state?: PullRequestState): Promise<GitPullRequestRow[]> {
    const q = this.knex<GitPullRequestRow>('git_pull_requests').where({ dashboard_uuid: dashboardUuid });
    if (state) q.andWhere({ state });
    return q.orderBy('created_at', 'desc');
  }

  /** The open pull request from this branch, if any. */
  async openFromBranch(dashboardUuid: string, branch: string): Promise<GitPullRequestRow | undefined> {
    return this.knex<GitPullRequestRow>('git_pull_requests')
      .where({ dashboard_uuid: dashboardUuid, head_branch: branch, state: 'open' })
      .first();
  }

  async updatePullRequest(id: string, patch: Partial<Omit<GitPullRequestRow, 'id' | 'created_at'>>): Promise<GitPullRequestRow> {
    const [row] = await this.knex<GitPullRequestRow>('git_pull_requests')
      .where({ id })
      .update({ ...patch, updated_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return row;
  }

  // --- webhooks ------------------------------------------------------------------------------

  async webhook(configId: string): Promise<GitWebhookRow | undefined> {
    if (!UUID.test(configId)) return undefined;
    return this.knex<GitWebhookRow>('git_webhooks').where({ config_id: configId }).first();
  }

  /** Sets the config's webhook secret and the person it acts as (the one who set it). */
  async setWebhook(configId: string, secret: string, ownerId: string): Promise<GitWebhookRow> {
    const existing = await this.webhook(configId);
    const id = existing?.id ?? crypto.randomUUID();
    const [row] = await this.knex<GitWebhookRow>('git_webhooks')
      .insert({ id, config_id: configId, owner_id: ownerId, secret_encrypted: this.keyring.encrypt(secret, secretOf(id)) })
      .onConflict('config_id')
      .merge(['secret_encrypted', 'owner_id', 'updated_at'])
      .returning('*');
    return row;
  }

  async removeWebhook(configId: string): Promise<boolean> {
    if (!UUID.test(configId)) return false;
    return (await this.knex('git_webhooks').where({ config_id: configId }).delete()) > 0;
  }

  /** The decrypted secret; only for verifying a delivery now. */
  secret(row: GitWebhookRow): string {
    return this.keyring.decrypt(row.secret_encrypted, secretOf(row.id));
  }

  /** Records a delivery once: false when this config took it before (a replay). */
  async recordDelivery(configId: string, deliveryId: string, outcome: string): Promise<boolean> {
    const rows = await this.knex('git_webhook_deliveries')
      .insert({ config_id: configId, delivery_id: deliveryId, outcome })
      .onConflict(['config_id', 'delivery_id'])
      .ignore()
      .returning('delivery_id');
    return rows.length > 0;
  }

  async settleDelivery(configId: string, deliveryId: string, outcome: string, taskId: string | null): Promise<void> {
    await this.knex('git_webhook_deliveries').where({ config_id: configId, delivery_id: deliveryId }).update({ outcome, task_id: taskId });
  }

  async delivery(configId: string, deliveryId: string): Promise<{ outcome: string; task_id: string | null } | undefined> {
    return this.knex('git_webhook_deliveries').where({ config_id: configId, delivery_id: deliveryId }).first('outcome', 'task_id');
  }

  reencryptSecrets(): Promise<SecretColumnCount> {
    return reencryptColumn(this.knex, this.keyring, SECRET);
  }
}
