/**
 * Companion assets: what people build around a dashboard that its export bundle does not carry
 * (alerts and reports, owners, dashboard roles, custom tags, annotation layers, CSS templates,
 * saved queries, certification, the dashboard's theme and its embedded configuration). A
 * migration reads them from the source, compares them with the target by name or uuid (never by
 * numeric id) and acts per kind as the request says.
 */
import type { NextAction } from './outcomes.ts';

export const COMPANION_KINDS = [
  'owners',
  'roles',
  'tags',
  'reports',
  'annotation_layers',
  'css_templates',
  'saved_queries',
  'certification',
  'themes',
  'embedded',
] as const;
export type CompanionKindName = (typeof COMPANION_KINDS)[number];

/**
 * copy: after the import the target gets what the source has (created or updated by name, never
 * deleting what only the target has); strict: a difference fails the dashboard before anything is
 * imported; ignore: compared and reported, nothing written.
 */
export const COMPANION_MODES = ['copy', 'strict', 'ignore'] as const;
export type CompanionMode = (typeof COMPANION_MODES)[number];

export type CompanionModes = Record<CompanionKindName, CompanionMode>;

/** What the API, the console and the CLI know of a kind besides its name (its behaviour is the domain's, domain/migration/companions/). */
export interface CompanionKindTraits {
  /** The mode a request that names none takes. */
  mode: CompanionMode;
  /** What a person reads for it. */
  label: { en: string; ru: string };
}

/**
 * Each kind's traits, one entry per name of COMPANION_KINDS (a kind missing or extra does not
 * compile). The modes: nothing silently disappears (every kind is read and reported) and nothing
 * silently widens access. Dashboard roles decide who sees a dashboard: under strict a dashboard
 * restricted to roles the target has arrives restricted to them, and one whose roles cannot be
 * matched fails with the requests to copy or ignore them (strictRefuses). Owners are copied: the
 * people who own it in the source, when the target has their accounts, instead of the importing
 * service account alone; never an account the target lacks. Reports are copied paused (see
 * `pause_reports`), so nothing mails from the target before someone checks.
 */
export const COMPANION_KIND_TRAITS = {
  owners: { mode: 'copy', label: { en: 'Owners', ru: 'Владельцы' } },
  roles: { mode: 'strict', label: { en: 'Dashboard roles', ru: 'Роли дашборда' } },
  tags: { mode: 'copy', label: { en: 'Tags', ru: 'Теги' } },
  reports: { mode: 'copy', label: { en: 'Alerts and reports', ru: 'Оповещения и отчёты' } },
  annotation_layers: { mode: 'copy', label: { en: 'Annotation layers', ru: 'Слои аннотаций' } },
  css_templates: { mode: 'copy', label: { en: 'CSS templates', ru: 'Шаблоны CSS' } },
  saved_queries: { mode: 'copy', label: { en: 'Saved queries', ru: 'Сохранённые запросы' } },
  certification: { mode: 'copy', label: { en: 'Certification', ru: 'Сертификация' } },
  themes: { mode: 'copy', label: { en: 'Theme', ru: 'Тема' } },
  embedded: { mode: 'copy', label: { en: 'Embedded configuration', ru: 'Настройки встраивания' } },
} as const satisfies Record<CompanionKindName, CompanionKindTraits>;

/** The defaults, from the kinds' traits (in COMPANION_KINDS' order). */
export const DEFAULT_COMPANION_MODES: CompanionModes = Object.fromEntries(
  COMPANION_KINDS.map((k) => [k, COMPANION_KIND_TRAITS[k].mode]),
) as CompanionModes;

/** Every kind compared and recorded, nothing written or refused: what a drift report's dry run asks. */
export const IGNORE_COMPANIONS: CompanionModes = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'ignore'])) as CompanionModes;

/** The request's `companions`: a mode per kind (absent kinds take the default), whether copied reports start paused, and the explicit widenings. */
export interface CompanionRequest extends Partial<CompanionModes> {
  /**
   * Copied reports and alerts are inactive in the target until someone turns them on (default
   * true); an update that changes what an active target report sends, or to whom, pauses it.
   * false: every copied report takes the source's active switch, the only way an updated report
   * keeps mailing after such a change.
   */
  pause_reports?: boolean;
  /** An embedded configuration whose source allows any domain (an empty list) replaces a target's non-empty list (default false: the target's list is kept and named). */
  embedded_any_domain?: boolean;
}

export type CompanionOptions = CompanionModes & { pause_reports: boolean; embedded_any_domain: boolean };

/** The modes a request asks for, defaults filled in. */
export function companionModes(req: CompanionRequest | undefined): CompanionOptions {
  const out = {
    ...DEFAULT_COMPANION_MODES,
    pause_reports: req?.pause_reports ?? true,
    embedded_any_domain: req?.embedded_any_domain ?? false,
  };
  for (const k of COMPANION_KINDS) if (req?.[k]) out[k] = req[k]!;
  return out;
}

/**
 * One companion compared: create (the target lacks it), update (both have it, `fields` differ),
 * unchanged, only_in_target (left as it is: copying never deletes), missing (it cannot be carried:
 * the target lacks what it names, an owner's account or a role; `next_action` says what to do).
 */
export type CompanionAction = 'create' | 'update' | 'unchanged' | 'only_in_target' | 'missing';

export interface CompanionItem {
  /** Its name on both sides: a username, role, tag, report, layer, template or query label. */
  name: string;
  /** What it belongs to, when not the dashboard itself: `chart 'Sales'`, `dataset 'orders'`. */
  on?: string;
  action: CompanionAction;
  fields?: string[];
  /** Written to the target by this run. */
  done: boolean;
  target_id?: number | null;
  note?: string;
  next_action?: NextAction;
  /** The write failed: Superset's message. */
  error?: string;
  /** An embedded configuration: the uuid host apps address in the source, and the one Superset assigned in the target. */
  source_uuid?: string;
  target_uuid?: string | null;
}

export interface CompanionKindReport {
  kind: CompanionKindName;
  mode: CompanionMode;
  /** false: an environment does not offer this kind (e.g. alerts and reports without ALERT_REPORTS): reported, never failed. */
  available: boolean;
  unavailable?: string;
  items: CompanionItem[];
  /** mode ignore (or strict in a dry run) with differences: recorded, not acted on. */
  ignored_by_request?: boolean;
}

/** Whether an item is a difference a `strict` mode refuses (only_in_target is not: copying would not change it either). */
export function isCompanionDifference(i: CompanionItem): boolean {
  return i.action === 'create' || i.action === 'update' || i.action === 'missing';
}

/**
 * Whether a kind's comparison is one its `strict` mode refuses. Dashboard roles restrict who sees
 * a dashboard, so under strict a dashboard restricted to roles the target has arrives restricted
 * to them (the roles kind writes them after the import); it stops when one is missing in the
 * target, or when the target's dashboard has roles the source's lacks (the union would let
 * others see it). A source dashboard with no roles leaves the target's own as they are. Every
 * other kind: any difference.
 */
export function strictRefuses(r: Pick<CompanionKindReport, 'kind' | 'items'>): boolean {
  if (r.kind !== 'roles') return r.items.some(isCompanionDifference);
  const restricted = r.items.some((i) => i.action !== 'only_in_target');
  return r.items.some((i) => i.action === 'missing') || (restricted && r.items.some((i) => i.action === 'only_in_target'));
}
