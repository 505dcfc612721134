/**
 * Alerts and reports (`/api/v1/report/`): the same API on 4.1, 5.0, 6.0 and 6.1, answered only with
 * Superset's ALERT_REPORTS feature flag on (otherwise every call is a 404). No export carries them.
 */
import { SupersetUnavailableError } from '../errors.ts';
import type { Pager } from '../transport/paging.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';

const REPORTS = '/api/v1/report/';

/** A report or an alert as Superset shows it, its JSON-in-a-string fields parsed. */
export interface ReportSchedule {
  id: number;
  name: string;
  type: string;
  active: boolean;
  crontab: string;
  timezone: string | null;
  description: string | null;
  creation_method: string | null;
  dashboard_id: number | null;
  chart_id: number | null;
  database_id: number | null;
  sql: string | null;
  validator_type: string | null;
  validator_config_json: Record<string, unknown> | null;
  grace_period: number | null;
  log_retention: number | null;
  working_timeout: number | null;
  report_format: string | null;
  force_screenshot: boolean | null;
  custom_width: number | null;
  extra: Record<string, unknown> | null;
  email_subject: string | null;
  recipients: Array<{ type: string; recipient_config_json: Record<string, unknown> }>;
  owners: Array<{ id: number; first_name?: string | null; last_name?: string | null; email?: string | null }>;
}

/** What a create or update sends: ids in the instance written to. */
export type ReportWrite = Omit<ReportSchedule, 'id' | 'dashboard_id' | 'chart_id' | 'database_id' | 'owners'> & {
  dashboard: number | null;
  chart: number | null;
  database?: number | null;
  owners: number[];
};

export class Reports {
  private readonly http: SupersetTransport;
  private readonly pager: Pager;

  constructor(http: SupersetTransport, pager: Pager) {
    this.http = http;
    this.pager = pager;
  }

  /** Every report and alert: id, name, type, dashboard_id, chart_id. A 404 means the ALERT_REPORTS flag is off. */
  async list(): Promise<Array<{ id: number; name: string; type: string; dashboard_id: number | null; chart_id: number | null }>> {
    const rows = await this.pager.paged<{
      id: number;
      name?: string;
      type?: string;
      dashboard_id?: number | null;
      chart_id?: number | null;
    }>(REPORTS, { columns: ['id', 'name', 'type', 'dashboard_id', 'chart_id'], order_column: 'name', order_direction: 'asc' }, (r) => r.id);
    return rows.map((r) => ({
      id: r.id,
      name: String(r.name ?? ''),
      type: String(r.type ?? ''),
      dashboard_id: r.dashboard_id ?? null,
      chart_id: r.chart_id ?? null,
    }));
  }

  async get(id: number): Promise<ReportSchedule> {
    const body = await this.http.getJson<{ result?: Record<string, unknown> }>(`${REPORTS}${seg(id)}`);
    return reportOf(id, body.result ?? {});
  }

  /** Creates a report or alert; its id. */
  async create(report: ReportWrite): Promise<number> {
    const body = await this.http.request<{ id?: unknown }>('POST', REPORTS, { json: report });
    if (typeof body.id !== 'number') {
      throw new SupersetUnavailableError('bad_response', 'Superset created a report without saying its id', {
        method: 'POST',
        path: REPORTS,
      });
    }
    return body.id;
  }

  async update(id: number, report: Partial<ReportWrite>): Promise<void> {
    await this.http.request('PUT', `${REPORTS}${seg(id)}`, { json: report });
  }
}

function jsonObject(v: unknown): Record<string, unknown> | null {
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v !== 'string' || !v.trim()) return null;
  try {
    const parsed = JSON.parse(v) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    // expected: an extra field that does not parse is none.
    return null;
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const idOf = (v: unknown): number | null => num((v as { id?: unknown } | null)?.id);

function reportOf(id: number, r: Record<string, unknown>): ReportSchedule {
  return {
    id,
    name: String(r.name ?? ''),
    type: String(r.type ?? ''),
    active: r.active === true,
    crontab: String(r.crontab ?? ''),
    timezone: str(r.timezone),
    description: str(r.description),
    creation_method: str(r.creation_method),
    dashboard_id: idOf(r.dashboard),
    chart_id: idOf(r.chart),
    database_id: idOf(r.database),
    sql: str(r.sql),
    validator_type: str(r.validator_type),
    validator_config_json: jsonObject(r.validator_config_json),
    grace_period: num(r.grace_period),
    log_retention: num(r.log_retention),
    working_timeout: num(r.working_timeout),
    report_format: str(r.report_format),
    force_screenshot: typeof r.force_screenshot === 'boolean' ? r.force_screenshot : null,
    custom_width: num(r.custom_width),
    extra: jsonObject(r.extra),
    email_subject: str(r.email_subject),
    recipients: (Array.isArray(r.recipients) ? r.recipients : []).map((x: { type?: unknown; recipient_config_json?: unknown }) => ({
      type: String(x.type ?? ''),
      recipient_config_json: jsonObject(x.recipient_config_json) ?? {},
    })),
    owners: (Array.isArray(r.owners) ? r.owners : []).map((o: Record<string, unknown>) => ({
      id: Number(o.id),
      first_name: str(o.first_name),
      last_name: str(o.last_name),
      email: str(o.email),
    })),
  };
}
