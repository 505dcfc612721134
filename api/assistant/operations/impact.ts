/**
 * "What uses video_game_sales in prod" / "что использует video_game_sales в проде": the impact of
 * a change (api/impact), read-only and run at once. A number names a dataset, a name a table.
 */
import type { Language, ObjectRef, ParseResult } from '../../../lib/assistant/intent.ts';
import type { ImpactTarget } from '../../../lib/impact/types.ts';
import type { ImpactPreview } from '../../impact/preview.ts';
import type { ImpactAnswer } from '../../impact/service.ts';
import { checkRefs, resolveEnvironment } from '../resolve.ts';
import { defineOperation, needs, type OperationContext, type Plan } from './types.ts';

const SHOWN = 10;

const TEXTS = {
  heading: {
    en: (what: string, env: string, a: ImpactAnswer) =>
      `${what} in ${env} is used by ${a.charts.length} chart(s) on ${a.dashboards.length} dashboard(s), ${a.datasets.filter((d) => d.kind === 'virtual').length} virtual dataset(s), ${a.saved_queries.length} saved query(ies) and ${a.reports.length} alert(s) or report(s).`,
    ru: (what: string, env: string, a: ImpactAnswer) =>
      `${what} в ${env} используют: графиков ${a.charts.length} на дашбордах (${a.dashboards.length}), виртуальных датасетов ${a.datasets.filter((d) => d.kind === 'virtual').length}, сохранённых запросов ${a.saved_queries.length}, алертов и отчётов ${a.reports.length}.`,
  },
  dashboards: { en: 'Dashboards', ru: 'Дашборды' },
  savedQueries: { en: 'Saved queries', ru: 'Сохранённые запросы' },
  reports: { en: 'Alerts and reports', ru: 'Алерты и отчёты' },
  unreadable: {
    en: (kind: string, message: string) => `Not read: ${kind} (${message}), so this answer may miss some.`,
    ru: (kind: string, message: string) => `Не прочитано: ${kind} (${message}), ответ может быть неполным.`,
  },
  migrated: {
    en: (env: string, charts: number, dashboards: number) =>
      `In ${env} (it migrates there): ${charts} chart(s) on ${dashboards} dashboard(s).`,
    ru: (env: string, charts: number, dashboards: number) =>
      `В ${env} (туда переносится): графиков ${charts} на дашбордах (${dashboards}).`,
  },
  notThere: { en: (env: string, note: string) => `In ${env}: ${note}.`, ru: (env: string, note: string) => `В ${env}: ${note}.` },
} as const;

/** One line for a confirmation: how many charts and dashboards use the datasets (or why that is not known). */
export function impactLine(lang: Language, previews: ImpactPreview[]): string {
  const failed = previews.find((p) => p.error);
  if (failed)
    return lang === 'ru' ? `Что их использует, не прочитано: ${failed.error}` : `What uses them could not be read: ${failed.error}`;
  const charts = new Set(previews.flatMap((p) => p.charts.map((c) => c.id))).size;
  const dashboards = new Set(previews.flatMap((p) => p.dashboards.map((d) => d.id))).size;
  return lang === 'ru'
    ? `Их используют графиков: ${charts}, дашбордов: ${dashboards}.`
    : `Used by ${charts} chart(s) on ${dashboards} dashboard(s).`;
}

const targetOf = (ref: ObjectRef): ImpactTarget => (typeof ref === 'number' ? { dataset: ref } : { table: ref });

function describe(lang: Language, what: string, env: string, a: ImpactAnswer): string[] {
  const names = (xs: Array<{ id: number; name: string }>) =>
    xs
      .slice(0, SHOWN)
      .map((x) => `#${x.id} ${x.name}`)
      .join(', ');
  const lines = [TEXTS.heading[lang](what, env, a)];
  if (a.dashboards.length) lines.push(`${TEXTS.dashboards[lang]}: ${names(a.dashboards)}`);
  if (a.saved_queries.length) lines.push(`${TEXTS.savedQueries[lang]}: ${names(a.saved_queries)}`);
  if (a.reports.length) lines.push(`${TEXTS.reports[lang]}: ${names(a.reports)}`);
  for (const u of a.unreadable) lines.push(TEXTS.unreadable[lang](u.kind, u.message));
  for (const m of a.migrates_to) {
    lines.push(
      m.impact
        ? TEXTS.migrated[lang](m.env_name, m.impact.charts.length, m.impact.dashboards.length)
        : TEXTS.notThere[lang](m.env_name, m.note ?? ''),
    );
  }
  return lines;
}

async function impact({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  checkRefs(lang, e.datasets!);
  const where = resolveEnvironment(lang, e.environment!, envs);
  const service = app.impact;
  const answers: ImpactAnswer[] = [];
  const lines: string[] = [];
  for (const ref of e.datasets!) {
    const a = await service.impact(where.id, targetOf(ref));
    answers.push(a);
    lines.push(...describe(lang, typeof ref === 'number' ? `#${ref}` : ref, where.name, a));
  }
  return {
    kind: 'read',
    text: lines.join('\n'),
    data: { env_id: where.id, impact: answers, entities: { ...e, environment: where } },
    outcome: { env_id: where.id, charts: answers.reduce((n, a) => n + a.charts.length, 0) },
  };
}

export const datasetsImpact = defineOperation('datasets.impact', { access: needs('datasets:READ'), plan: impact });
