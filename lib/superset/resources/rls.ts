/** Row-level-security rules (the same API on 4.1, 5.0, 6.0 and 6.1; exports never carry these rules) and the roles they may name. */
import { SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import type { RlsRule, RlsRuleWrite, UpstreamRole } from '../types.ts';

const RULES = '/api/v1/rowlevelsecurity/';

export class RowLevelSecurity {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  /** Every rule, with its tables (dataset id, table name) and roles (id, name); no descriptions. */
  async list(): Promise<RlsRule[]> {
    // Rule names are unique in Superset, so ordering by name pages stably.
    const rows = await this.pager.paged<Partial<RlsRule> & { id: number }>(
      RULES,
      { order_column: 'name', order_direction: 'asc' },
      (r) => r.id,
    );
    return rows.map(rlsRuleOf);
  }

  /** One rule with its description and its tables' schemas. */
  async get(id: number): Promise<RlsRule> {
    const body = await this.http.getJson<{ id?: number; result?: Partial<RlsRule> }>(`${RULES}${seg(id)}`);
    return rlsRuleOf({ ...body.result, id });
  }

  /** Creates a rule; its id. Superset 4.1 answers 201, later releases 200. */
  async create(rule: RlsRuleWrite): Promise<number> {
    const body = await this.http.request<{ id?: unknown }>('POST', RULES, { json: rule });
    if (typeof body.id !== 'number') {
      throw new SupersetUnavailableError('bad_response', 'Superset created a row-level-security rule without saying its id', {
        method: 'POST',
        path: RULES,
      });
    }
    return body.id;
  }

  /** Replaces a rule's fields (tables and roles are set to exactly these ids). */
  async update(id: number, rule: RlsRuleWrite): Promise<void> {
    await this.http.request('PUT', `${RULES}${seg(id)}`, { json: rule });
  }

  async delete(id: number): Promise<void> {
    await this.http.request('DELETE', `${RULES}${seg(id)}`);
  }

  /**
   * The roles a rule may name, from the rule API's own related-field list: it answers on every
   * release whether or not the security API (`FAB_ADD_SECURITY_API`) is on.
   */
  async roles(): Promise<UpstreamRole[]> {
    const rows = await this.pager.paged<{ value: number; text: string }>(`${RULES}related/roles`, {}, (r) => r.value);
    return rows.map((r) => ({ id: r.value, name: String(r.text) }));
  }
}

function rlsRuleOf(r: Partial<RlsRule> & { id: number }): RlsRule {
  return {
    id: r.id,
    name: String(r.name ?? ''),
    filter_type: String(r.filter_type ?? ''),
    clause: String(r.clause ?? ''),
    group_key: typeof r.group_key === 'string' && r.group_key ? r.group_key : null,
    ...(r.description !== undefined ? { description: r.description ?? null } : {}),
    tables: (r.tables ?? []).map((t) => ({ id: Number(t.id), table_name: String(t.table_name ?? ''), schema: t.schema ?? null })),
    roles: (r.roles ?? []).map((x) => ({ id: Number(x.id), name: String(x.name ?? '') })),
  };
}
