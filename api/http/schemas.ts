import { z } from 'zod';
import { normaliseBaseUrl } from '../../lib/superset/client.ts';

/** `page` >= 1 (default 1) and `page_size` 1..100 (default 25), as ../shared/API.md fixes them. */
export const pagination = {
  page: z.coerce.number({ error: 'page must be an integer' }).int('page must be an integer').min(1, 'page must be at least 1').default(1),
  page_size: z.coerce
    .number({ error: 'page_size must be an integer' })
    .int('page_size must be an integer')
    .min(1, 'page_size must be at least 1')
    .max(100, 'page_size must be at most 100')
    .default(25),
};

/**
 * Lists that page in Superset reach at most this many rows deep (page × page_size): each deeper
 * page makes Superset sort and skip more rows, so one request must not ask for an unbounded
 * offset. Beyond it, narrow the list with `search`.
 */
/** Superset keeps object ids (dashboards, charts, datasets, databases) as 32-bit integers. */
export const SUPERSET_ID_MAX = 2_147_483_647;

/** A Superset object id in a JSON body: a positive 32-bit integer. */
export const supersetId = (what: string) =>
  z
    .number({ error: `must be a ${what} id (a positive integer)` })
    .int(`must be a ${what} id (a positive integer)`)
    .positive(`must be a ${what} id (a positive integer)`)
    .max(SUPERSET_ID_MAX, `must be a ${what} id (at most ${SUPERSET_ID_MAX})`);

/** The same id in a path or query string. */
export const supersetIdParam = (what: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/, `must be a ${what} id (a positive integer)`)
    .transform(Number)
    .pipe(z.number().max(SUPERSET_ID_MAX, `must be a ${what} id (at most ${SUPERSET_ID_MAX})`));

/**
 * A base URL where a stored secret is sent (a Superset, an LLM provider): http(s), normalised, no
 * credentials, query or fragment.
 */
export const secretDestinationUrl = (description: string) =>
  z
    .string()
    .trim()
    .min(1, 'base_url is required')
    .max(2000)
    .transform((v, ctx) => {
      try {
        return normaliseBaseUrl(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    })
    .describe(description);

/**
 * Deepest page asked of Superset: far past any list (a billion pages), only so the offset stays a
 * safe integer. There is no bound on page × page_size: Superset serves every page, an empty one
 * past the last row.
 */
export const UPSTREAM_MAX_PAGE = 1_000_000_000;

export const upstreamPagination = {
  page: z.coerce
    .number({ error: 'page must be an integer' })
    .int('page must be an integer')
    .min(1, 'page must be at least 1')
    .max(UPSTREAM_MAX_PAGE, `page must be at most ${UPSTREAM_MAX_PAGE}`)
    .default(1)
    .describe('1-based; any depth is served as Superset serves it (past the last row: an empty page, `has_next` false)'),
  page_size: pagination.page_size,
};

export const pageEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), total: z.number().int(), page: z.number().int(), page_size: z.number().int(), has_next: z.boolean() });

/** Query booleans: accept true/false/1/0 (case-insensitive); anything else is a 400. */
export const queryBoolean = z
  .union([z.boolean(), z.string().regex(/^(true|false|1|0)$/i, 'must be true or false')])
  .transform((v) => v === true || (typeof v === 'string' && /^(true|1)$/i.test(v)));

/** Comma-separated or repeated query values. */
export const csv = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) =>
      v === undefined
        ? undefined
        : (Array.isArray(v) ? v : [v])
            .flatMap((s) => String(s).split(','))
            .map((s) => s.trim())
            .filter(Boolean),
    z.array(item).min(1).optional(),
  );

// A day inside year 1: node-pg writes a Date in the local zone, which must not land in year 0. (Not Date.UTC(1, ...): it reads year 1 as 1901.)
const MIN_INSTANT = Date.parse('0001-01-02T00:00:00Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An ISO 8601 date-time with a zone offset, as an instant (a Date). Handed to PostgreSQL as an
 * instant rather than as the caller's text: PostgreSQL refuses offsets beyond ±15:59 and the
 * year 0 that ISO 8601 allows, which would otherwise surface as a 500.
 */
export const isoInstant = (name: string) =>
  z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time with a zone, e.g. 2027-01-31T00:00:00Z` })
    .transform((v) => new Date(v))
    .refine((d) => d.getTime() >= MIN_INSTANT && d.getTime() <= MAX_INSTANT, `${name} must lie between the years 0001 and 9999`);
