/**
 * Every role, for mapping dashboard roles across environments by name: the dashboard API's own
 * related-field list (`/api/v1/dashboard/related/roles`), which every release answers whether or
 * not the security API is on.
 */
import type { Pager } from '../transport/paging.ts';
import type { UpstreamRole } from '../types.ts';

export class Roles {
  private readonly pager: Pager;

  constructor(pager: Pager) {
    this.pager = pager;
  }

  async all(): Promise<UpstreamRole[]> {
    const rows = await this.pager.paged<{ value: number; text: string }>('/api/v1/dashboard/related/roles', { filter: '' }, (r) => r.value);
    return rows.map((r) => ({ id: r.value, name: String(r.text) }));
  }
}
