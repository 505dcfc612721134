/** SQL Lab: a query run synchronously as the service account, and SQL Lab's saved queries. */
import { randomBytes } from 'node:crypto';
import { normaliseErrorBody, SupersetApiError, SupersetUnavailableError } from '../errors.ts';
import type { SupersetTransport } from '../transport/transport.ts';
import { tryJson, type CallSpec, type WireResponse } from '../transport/wire.ts';
import type { SqlLabQuery, SqlLabResult } from '../types.ts';

export interface SavedQuery {
  databaseId: number;
  label: string;
  sql: string;
  schema?: string | null;
  catalog?: string | null;
  description?: string | null;
  templateParameters?: string | null;
}

export class SqlLab {
  private readonly http: SupersetTransport;

  constructor(http: SupersetTransport) {
    this.http = http;
  }

  /**
   * Runs one query through SQL Lab (`POST /api/v1/sqllab/execute/`, synchronously) as the
   * service account, with its permissions and the database's own rules (DML only where the
   * database allows it). A query the database refuses (syntax, no such table) is a
   * SupersetApiError with the database's message: Superset answers those with 500 and an
   * `errors[]` body, which is no outage.
   */
  execute(query: SqlLabQuery): Promise<SqlLabResult> {
    const spec: CallSpec = {
      method: 'POST',
      path: '/api/v1/sqllab/execute/',
      json: {
        database_id: query.databaseId,
        sql: query.sql,
        ...(query.schema ? { schema: query.schema } : {}),
        ...(query.catalog ? { catalog: query.catalog } : {}),
        runAsync: false,
        queryLimit: query.limit ?? 10_000,
        // At most 11 characters, unique per query.
        client_id: randomBytes(8).toString('base64url').slice(0, 11),
      },
      pass: [202, 500],
    };
    return this.http.call(spec, (res) => this.resultOf(spec, res));
  }

  /** `POST /api/v1/saved_query/`: saves a query in SQL Lab's saved queries; answers its id. */
  async save(q: SavedQuery): Promise<{ id: number }> {
    const body = await this.http.request<{ id?: number }>('POST', '/api/v1/saved_query/', {
      json: {
        db_id: q.databaseId,
        label: q.label,
        sql: q.sql,
        ...(q.schema ? { schema: q.schema } : {}),
        ...(q.catalog ? { catalog: q.catalog } : {}),
        ...(q.description ? { description: q.description } : {}),
        ...(q.templateParameters ? { template_parameters: q.templateParameters } : {}),
      },
    });
    if (typeof body.id !== 'number')
      throw new SupersetUnavailableError('bad_response', 'Superset saved the query without answering its id', {
        method: 'POST',
        path: '/api/v1/saved_query/',
      });
    return { id: body.id };
  }

  private resultOf(spec: CallSpec, res: WireResponse): SqlLabResult {
    const body = tryJson(res.body);
    const ctx = { method: spec.method, path: spec.path, upstreamStatus: res.status };
    if (res.status === 500) {
      const { message, errorType } = normaliseErrorBody(body, 'no usable error message');
      if (errorType) throw new SupersetApiError(ctx, message, body, { errorType, detail: `the query failed in the database: ${message}` });
      throw this.http.unavailable(res, ctx);
    }
    if (res.status === 202) {
      throw new SupersetApiError(ctx, 'the database runs SQL Lab queries asynchronously', body, {
        detail:
          'Superset ran the query asynchronously (the database has "Asynchronous query execution" on); Switchyard needs its answer synchronously',
      });
    }
    const r = this.http.parseJson<{
      data?: unknown;
      columns?: Array<{ name?: string; column_name?: string }>;
      query?: { limitingFactor?: string };
    }>(res, ctx);
    if (!Array.isArray(r.data)) throw new SupersetUnavailableError('bad_response', 'SQL Lab answered without rows', ctx);
    return {
      columns: (r.columns ?? []).map((c) => String(c.name ?? c.column_name ?? '')),
      rows: r.data.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x)),
      limited: !!r.query?.limitingFactor && r.query.limitingFactor !== 'NOT_LIMITED',
    };
  }
}
