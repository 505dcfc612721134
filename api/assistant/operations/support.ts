/** What several operations' plans share: the route's own request schema, list answers, one dashboard. */
import type { z } from 'zod';
import type { Entities, Language, ObjectRef } from '../../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../../lib/assistant/operation-texts.ts';
import { TEXTS } from '../../../lib/assistant/texts.ts';
import type { AppContext } from '../../context.ts';
import { Clarification, resolveDashboards, type DashboardRef, type EnvRef } from '../resolve.ts';
import type { Plan } from './types.ts';

/**
 * A task request as the direct route would receive it, parsed by the route's own schema (same
 * defaults, same limits); what the schema refuses becomes a question, not a 500.
 */
export function requestBody<S extends z.ZodType>(lang: Language, schema: S, body: z.input<S>): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const why = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new Clarification(TEXTS.refused[lang](why), {
    invalid: 'request',
    errors: r.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message })),
  });
}

/** A list in an environment: the count (with the query, if any), then the first ten lines. */
export function listAnswer(
  lang: Language,
  e: Entities,
  where: EnvRef,
  list: { total: number; counted: string; items: unknown[]; lines: string[] },
): Plan {
  const heading = OPERATION_TEXTS.listHeading[lang](where.name, list.counted, e.query, list.lines.length > 0);
  return {
    kind: 'read',
    text: [heading, ...list.lines.slice(0, 10)].join('\n'),
    data: { env_id: where.id, total: list.total, items: list.items, entities: { ...e, environment: where } },
    outcome: { env_id: where.id, total: list.total },
  };
}

/** The one dashboard an operation works on (a question when the names give several). */
export async function oneDashboard(app: AppContext, lang: Language, where: EnvRef, refs: ObjectRef[]): Promise<DashboardRef> {
  const ds = await resolveDashboards(lang, app.supersets, where.id, refs);
  if (ds.length !== 1) throw new Clarification(OPERATION_TEXTS.pickOneDashboard[lang](ds), { ambiguous: 'dashboard', candidates: ds });
  return ds[0]!;
}
