/**
 * Every upstream account, for mapping people across environments (by username, then e-mail, then
 * full name): FAB's security API (`FAB_ADD_SECURITY_API`) when the service account may read it,
 * otherwise the dashboards' related owners, which carry no usernames.
 */
import type { Pager } from '../transport/paging.ts';
import type { UpstreamAccount } from '../types.ts';
import { displayName, type Security } from './security.ts';

type Related = { value: number; text: string; extra?: { email?: string | null; active?: boolean | null } };

export class Users {
  private readonly pager: Pager;
  private readonly security: Security;

  constructor(pager: Pager, security: Security) {
    this.pager = pager;
    this.security = security;
  }

  /** Every account: through the security API when it answers (usernames known), else the related owners (`username: null`). */
  async all(): Promise<{ accounts: UpstreamAccount[]; usernames: boolean }> {
    const probe = await this.security.users(undefined, 1);
    if (probe !== undefined) {
      type Row = { id: number; username?: string; first_name?: string; last_name?: string; email?: string; active?: boolean };
      const rows = await this.pager.paged<Row>(
        '/api/v1/security/users/',
        { columns: ['id', 'username', 'first_name', 'last_name', 'email', 'active'], order_column: 'id', order_direction: 'asc' },
        (r) => r.id,
      );
      return {
        usernames: true,
        accounts: rows.map((u) => ({
          id: u.id,
          username: u.username ?? null,
          display_name: displayName(u),
          first_name: u.first_name ?? null,
          last_name: u.last_name ?? null,
          email: u.email ?? null,
          active: u.active ?? null,
        })),
      };
    }
    const rows = await this.pager.paged<Related>('/api/v1/dashboard/related/owners', { filter: '' }, (r) => r.value);
    return {
      usernames: false,
      accounts: rows.map((r) => ({
        id: r.value,
        username: null,
        display_name: String(r.text ?? ''),
        first_name: null,
        last_name: null,
        email: r.extra?.email ?? null,
        active: r.extra?.active ?? null,
      })),
    };
  }
}
