/** A review session as its exports read it: the documentation (Markdown) and the validation checks. */
import type { SemanticDictionaryStore } from '../../db/dataset-review/dictionaries.ts';
import type { ReviewSessionStore } from '../../db/dataset-review/sessions.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import { documentationMarkdown, validationChecks, type ReviewView } from '../../lib/dataset-review/render.ts';
import type { Principal } from '../auth/principal.ts';
import type { SessionParts } from './answers.ts';
import { authorizedSessions } from './policy.ts';

export type ExportStores = SessionParts & {
  sessions: ReviewSessionStore;
  dictionaries: SemanticDictionaryStore;
  environments: EnvironmentStore;
};

export async function reviewView(stores: ExportStores, p: Principal, id: string): Promise<ReviewView> {
  const s = await authorizedSessions(stores.sessions, p).get(id);
  const [fields, mappings, env] = await Promise.all([
    stores.fields.list(id),
    stores.mappings.list(id),
    stores.environments.get(s.env_id).catch(() => null),
  ]);
  const dict = s.dictionary_id ? await stores.dictionaries.get(s.dictionary_id).catch(() => null) : null;
  const preview = s.preview as ReviewView['preview'];
  return {
    id: s.id,
    title: s.title,
    state: s.state,
    version: s.version,
    env_name: env?.name ?? s.env_id,
    dashboard: s.dashboard,
    dataset: s.dataset,
    imported_filters: s.imported_filters,
    template_variables: s.template_variables,
    recovery_markers: s.recovery_markers,
    fields,
    mappings,
    preview,
    dictionary: dict ? { id: dict.id, name: dict.name, version: s.dictionary_version ?? 0, current_version: dict.current_version } : null,
  };
}

export async function documentation(stores: ExportStores, p: Principal, id: string): Promise<string> {
  return documentationMarkdown(await reviewView(stores, p, id));
}

export async function validation(stores: ExportStores, p: Principal, id: string) {
  const v = await reviewView(stores, p, id);
  const checks = validationChecks(v);
  return { session_id: v.id, version: v.version, passed: checks.every((c) => c.passed), checks };
}
