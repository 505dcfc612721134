import { z } from 'zod';

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
export const UPSTREAM_MAX_ROWS = 10_000;

export const upstreamPagination = {
  page: z.coerce
    .number({ error: 'page must be an integer' })
    .int('page must be an integer')
    .min(1, 'page must be at least 1')
    .max(UPSTREAM_MAX_ROWS, `page must be at most ${UPSTREAM_MAX_ROWS}`)
    .default(1)
    .describe(`1-based; page × page_size may not exceed ${UPSTREAM_MAX_ROWS} (400): narrow deep lists with \`search\``),
  page_size: pagination.page_size,
};

/** Refinement for an object holding upstreamPagination: the page may not end beyond UPSTREAM_MAX_ROWS. */
export function withinUpstreamRows(q: { page: number; page_size: number }, ctx: z.RefinementCtx): void {
  if (q.page * q.page_size > UPSTREAM_MAX_ROWS)
    ctx.addIssue({
      code: 'custom',
      path: ['page'],
      message: `page × page_size must not exceed ${UPSTREAM_MAX_ROWS} (got ${q.page} × ${q.page_size}); narrow the list with search`,
    });
}

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
