/**
 * A dashboard's embedded configuration (`/api/v1/dashboard/{id_or_slug}/embedded`, every release
 * 4.1.4-6.1.0): the uuid a host app's embedding SDK addresses and the domains allowed to frame
 * it. The API answers whether or not `EMBEDDED_SUPERSET` is on (the flag gates the embedded page
 * and guest tokens). Superset assigns the uuid; an update keeps it.
 */
import { SupersetNotFoundError, SupersetUnavailableError } from '../errors.ts';
import { seg } from '../transport/paths.ts';
import type { SupersetTransport } from '../transport/transport.ts';

export interface EmbeddedConfig {
  uuid: string;
  allowed_domains: string[];
}

const path = (dashboardId: number) => `/api/v1/dashboard/${seg(dashboardId)}/embedded`;

export class Embedded {
  private readonly http: SupersetTransport;

  constructor(http: SupersetTransport) {
    this.http = http;
  }

  /** The dashboard's embedded configuration; null when it has none (Superset's 404). */
  async get(dashboardId: number): Promise<EmbeddedConfig | null> {
    try {
      return read(await this.http.getJson<{ result?: unknown }>(path(dashboardId)), path(dashboardId));
    } catch (err) {
      if (err instanceof SupersetNotFoundError) return null;
      throw err;
    }
  }

  /** Creates or updates it (`PUT`, an upsert that keeps the uuid); Superset's answer. */
  async set(dashboardId: number, allowedDomains: string[]): Promise<EmbeddedConfig> {
    return read(
      await this.http.request<{ result?: unknown }>('PUT', path(dashboardId), { json: { allowed_domains: allowedDomains } }),
      path(dashboardId),
    );
  }
}

function read(body: { result?: unknown }, at: string): EmbeddedConfig {
  const r = body.result as { uuid?: unknown; allowed_domains?: unknown } | undefined;
  if (!r || typeof r.uuid !== 'string')
    throw new SupersetUnavailableError('bad_response', 'Superset answered an embedded configuration without its uuid', {
      method: 'GET',
      path: at,
    });
  const domains = Array.isArray(r.allowed_domains) ? r.allowed_domains.filter((d): d is string => typeof d === 'string') : [];
  return { uuid: r.uuid, allowed_domains: domains };
}
