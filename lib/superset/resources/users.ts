/**
 * Every upstream account, for mapping people across environments (by username, then e-mail, then
 * full name): FAB's security API (`FAB_ADD_SECURITY_API`) when the service account may read it,
 * otherwise the dashboards' related owners, which carry no usernames.
 */
import type { Pager } from '../transport/paging.ts';
import type { UpstreamAccount } from '../types.ts';
import { displayName, securityApiClosed } from './security.ts';

type Related = { value: number; text: string; extra?: { email?: string | null; active?: boolean | null } };

export class Users {
  private readonly pager: Pager;

  constructor(pager: Pager) {
    this.pager = pager;
  }

  /** Every account: through the security API when it answers (usernames known), else the related owners (`username: null`). */
  async all(): Promise<{ accounts: UpstreamAccount[]; usernames: boolean }> {
    type Row = { id: number; username?: string; first_name?: string; last_name?: string; email?: string; active?: boolean };
    let listed: Row[] | undefined;
    try {
      // Straight to the list (no probe first): a closed security API answers its first page with the same refusal.
      listed = await this.pager.paged<Row>(
        '/api/v1/security/users/',
        { columns: ['id', 'username', 'first_name', 'last_name', 'email', 'active'], order_column: 'id', order_direction: 'asc' },
        (r) => r.id,
      );
    } catch (err) {
      if (!securityApiClosed(err)) throw err;
    }
    if (listed) {
      return {
        usernames: true,
        accounts: listed.map((u) => ({
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
