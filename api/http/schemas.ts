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
