import type { ReviewClarificationStore } from '../../db/dataset-review/clarifications.ts';
import type { SemanticDictionaryStore } from '../../db/dataset-review/dictionaries.ts';
import type { ReviewFieldStore } from '../../db/dataset-review/fields.ts';
import type { ReviewMappingStore } from '../../db/dataset-review/mappings.ts';
import type { ReviewSessionStore, SessionRow } from '../../db/dataset-review/sessions.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import type { SuggestionStore } from '../../db/datasets/suggestions.ts';
import type { Stores, Transaction } from '../../db/stores.ts';
import { LinkError, parseDashboardLink } from '../../lib/dataset-review/link.ts';
import { buildSnapshot, proposeMappings } from '../../lib/dataset-review/snapshot.ts';
import type { VariableKind } from '../../lib/dataset-review/jinja.ts';
import { ConflictError, ValidationError } from '../../lib/errors.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';
import type { Principal } from '../auth/principal.ts';
import type { Supersets } from '../environments/upstream.ts';
import type { UploadedFile } from '../http/routes.ts';
import { applyAnswer, type Answer } from './answer.ts';
import { actor, clarificationOut, fieldOut, mappingOut, sessionSummary, sessionView } from './answers.ts';
import { questions, type Question } from './clarification.ts';
import { addDictionaryVersion } from './dictionary-versions.ts';
import { documentation, validation, type ExportStores } from './exports.ts';
import { acceptedByColumn, proposeFields } from './fields.ts';
import { recover, recoverDataset } from './intake.ts';
import { authorizedSessions, reviewPolicy } from './policy.ts';
import { mayPreview, runPreview, type Preview } from './preview.ts';

export { fieldOut, mappingOut, versionOut } from './answers.ts';

/**
 * Dataset review sessions: intake, semantic fields, mappings, clarification, preview, exports.
 * Every mutation runs in one transaction whose first statement is the session's conditional
 * version update (ReviewSessionStore.advance), so a stale version changes nothing.
 */
export class ReviewService {
  readonly sessions: ReviewSessionStore;
  readonly fields: ReviewFieldStore;
  readonly mappings: ReviewMappingStore;
  readonly clarifications: ReviewClarificationStore;
  readonly dictionaries: SemanticDictionaryStore;
  private readonly suggestions: SuggestionStore;
  private readonly stores: Pick<Stores, 'transaction'>;
  private readonly supersets: Supersets;
  private readonly environments: EnvironmentStore;
  private readonly exportStores: ExportStores;

  constructor(deps: { stores: Pick<Stores, 'review' | 'datasetSuggestions' | 'environments' | 'transaction'>; supersets: Supersets }) {
    this.stores = deps.stores;
    this.supersets = deps.supersets;
    this.environments = deps.stores.environments;
    this.sessions = deps.stores.review.sessions;
    this.fields = deps.stores.review.fields;
    this.mappings = deps.stores.review.mappings;
    this.clarifications = deps.stores.review.clarifications;
    this.dictionaries = deps.stores.review.dictionaries;
    this.suggestions = deps.stores.datasetSuggestions;
    this.exportStores = { ...deps.stores.review, environments: deps.stores.environments };
  }

  // ---------------------------------------------------------------------------------------------
  // sessions

  /** The caller's sessions: every read and write of one goes through the policy. */
  sessionsOf(p: Principal) {
    return authorizedSessions(this.sessions, p);
  }

  async start(p: Principal, envId: string, link: string) {
    const owner = reviewPolicy.owner(p);
    const env = await this.environments.get(envId);
    const base = env.base_url.replace(/\/+$/, '');
    let parsed;
    try {
      parsed = parseDashboardLink(link, base);
    } catch (err) {
      if (err instanceof LinkError) throw new ValidationError(`link: ${err.message}`, [{ field: 'body.link', message: err.message }]);
      throw err;
    }
    const dictionary = await this.currentDictionary();
    const { recovered, accepted } = await this.supersets.use(env.id, async (client) => {
      const r = await recover(client, parsed, base);
      const acc = r.dataset ? await this.suggestions.acceptedFor(env.id, r.dataset.id) : [];
      return { recovered: r, accepted: acc };
    });
    return this.stores.transaction(async (trx) => {
      const session = await this.sessions.create(
        {
          owner_id: owner,
          owner_username: p.username,
          env_id: env.id,
          link,
          link_kind: parsed.kind,
          state: recovered.markers.length ? 'recovery-required' : 'ready',
          title: recovered.title,
          dashboard: recovered.dashboard,
          dataset: recovered.dataset,
          candidate_datasets: recovered.candidate_datasets,
          charts: recovered.charts,
          imported_filters: recovered.imported_filters,
          template_variables: recovered.template_variables,
          recovery_markers: recovered.markers,
          dictionary_id: dictionary?.id ?? null,
          dictionary_version: dictionary?.version ?? null,
        },
        trx,
      );
      if (recovered.detail)
        await this.fields.replace(
          trx,
          session.id,
          proposeFields(recovered.detail, { table: recovered.detail.table_name, dictionary, accepted: acceptedByColumn(accepted) }),
        );
      await this.mappings.replace(trx, session.id, proposeMappings(recovered.imported_filters, recovered.template_variables));
      return this.view(session, p, trx);
    });
  }

  private async currentDictionary() {
    const d = await this.dictionaries.latestUsable();
    if (!d) return null;
    const v = await this.dictionaries.version(d.id, d.current_version);
    return v ? { id: d.id, version: v.version, entries: v.entries } : null;
  }

  async get(p: Principal, id: string) {
    return this.view(await this.sessionsOf(p).get(id), p);
  }

  async list(p: Principal, page: number, pageSize: number) {
    const { rows, total } = await this.sessionsOf(p).list(page, pageSize);
    return {
      items: rows.map((s) => this.summary(s)),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }

  async patch(p: Principal, id: string, body: { version: number; title?: string | null; note?: string | null; dataset_id?: number }) {
    if (body.dataset_id !== undefined)
      return this.chooseDataset(p, id, body.version, body.dataset_id, { title: body.title, note: body.note });
    return this.stores.transaction(async (trx) => {
      const s = await this.sessionsOf(p).advance(
        id,
        body.version,
        { ...(body.title !== undefined ? { title: body.title } : {}), ...(body.note !== undefined ? { note: body.note } : {}) },
        trx,
      );
      return this.view(s, p, trx);
    });
  }

  async delete(p: Principal, id: string, version: number) {
    await this.sessionsOf(p).delete(id, version);
  }

  /** Chooses the reviewed dataset among the dashboard's (an answer or a patch): its fields, filter checks and mappings are recovered anew. */
  private async chooseDataset(
    p: Principal,
    id: string,
    version: number,
    datasetId: number,
    extra: { title?: string | null; note?: string | null } = {},
    before?: (trx: Transaction) => Promise<void>,
  ) {
    const s = await this.sessionsOf(p).get(id);
    if (s.version !== version) await this.sessionsOf(p).advance(id, version); // throws the 409
    const allowed = s.candidate_datasets.map((d) => d.id).concat(s.dataset ? [s.dataset.id] : []);
    if (!allowed.includes(datasetId)) {
      throw new ValidationError(`dataset ${datasetId} is not behind this dashboard (choose one of ${allowed.join(', ') || 'none'})`, [
        { field: 'body.dataset_id', message: 'not a dataset of the dashboard' },
      ]);
    }
    const env = await this.environments.get(s.env_id);
    const base = env.base_url.replace(/\/+$/, '');
    const markers = s.recovery_markers.filter((m) => m.kind !== 'filter_column' && !(m.kind === 'dataset' && m.ref !== null));
    const filters = s.imported_filters.map((f) => ({ ...f, column_in_dataset: null }));
    const { r, accepted } = await this.supersets.use(env.id, async (client) => {
      const rec = await recoverDataset(client, datasetId, base, filters, markers);
      return { r: rec, accepted: rec.dataset ? await this.suggestions.acceptedFor(env.id, datasetId) : [] };
    });
    const dictionary = s.dictionary_id ? await this.dictionaryAt(s.dictionary_id, s.dictionary_version) : null;
    return this.stores.transaction(async (trx) => {
      const next = await this.sessionsOf(p).advance(
        id,
        version,
        {
          dataset: r.dataset,
          imported_filters: r.filters,
          template_variables: r.variables,
          recovery_markers: markers,
          state: markers.length ? 'recovery-required' : 'ready',
          preview: null,
          ...(extra.title !== undefined
            ? { title: extra.title }
            : r.dataset && s.dashboard
              ? { title: `${s.dashboard.title ?? s.dashboard.id} · ${r.dataset.table_name}` }
              : {}),
          ...(extra.note !== undefined ? { note: extra.note } : {}),
        },
        trx,
      );
      if (before) await before(trx);
      await this.fields.replace(
        trx,
        id,
        r.detail
          ? proposeFields(r.detail as DatasetDetail, { table: r.detail.table_name, dictionary, accepted: acceptedByColumn(accepted) })
          : [],
      );
      await this.mappings.replace(trx, id, proposeMappings(r.filters, r.variables));
      return this.view(next, p, trx);
    });
  }

  private async dictionaryAt(id: string, version: number | null) {
    if (!version) return null;
    const v = await this.dictionaries.version(id, version);
    return v ? { id, version, entries: v.entries } : null;
  }

  // ---------------------------------------------------------------------------------------------
  // fields

  async overrideField(
    p: Principal,
    id: string,
    fieldId: string,
    body: { version: number; label?: string | null; description?: string | null },
  ) {
    return this.stores.transaction(async (trx) => {
      const s = await this.sessionsOf(p).advance(id, body.version, {}, trx);
      const f = await this.fields.get(id, fieldId, trx);
      const field = await this.fields.update(
        trx,
        id,
        fieldId,
        {
          label: body.label !== undefined ? body.label : f.label,
          description: body.description !== undefined ? body.description : f.description,
          provenance: 'manual',
          status: 'manual',
          locked: true,
          pending_candidate: null,
          source: {
            set_by: p.username,
            set_by_id: p.userId,
            set_at: new Date().toISOString(),
            previous: { label: f.label, description: f.description, provenance: f.provenance },
          },
        },
        actor(p),
      );
      return { version: s.version, field: fieldOut(field) };
    });
  }

  async lockField(p: Principal, id: string, fieldId: string, version: number, locked: boolean) {
    return this.stores.transaction(async (trx) => {
      const s = await this.sessionsOf(p).advance(id, version, {}, trx);
      const f = await this.fields.get(id, fieldId, trx);
      const field = await this.fields.update(
        trx,
        id,
        fieldId,
        { locked, ...(locked && f.status === 'needs_review' ? { status: 'proposed', pending_candidate: null } : {}) },
        actor(p),
      );
      return { version: s.version, field: fieldOut(field) };
    });
  }

  async fieldFeedback(
    p: Principal,
    id: string,
    fieldId: string,
    body: { version: number; verdict: 'useful' | 'wrong'; comment?: string | null },
  ) {
    return this.stores.transaction(async (trx) => {
      const s = await this.sessionsOf(p).advance(id, body.version, {}, trx);
      const f = await this.fields.get(id, fieldId, trx);
      const fb = await this.fields.addFeedback(trx, {
        session_id: id,
        field_id: fieldId,
        verdict: body.verdict,
        comment: body.comment ?? null,
        value_at_feedback: { label: f.label, description: f.description, provenance: f.provenance },
        user_id: p.userId,
        username: p.username,
      });
      return {
        version: s.version,
        feedback: {
          id: fb.id,
          field_id: fieldId,
          verdict: fb.verdict,
          comment: fb.comment,
          value_at_feedback: fb.value_at_feedback,
          username: fb.username,
          created_at: fb.created_at.toISOString(),
        },
        field: fieldOut(f),
      };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // mappings

  async patchMapping(p: Principal, id: string, mappingId: string, body: { version: number; variable?: string | null; value?: unknown }) {
    return this.stores.transaction(async (trx) => {
      const s = await this.sessionsOf(p).advance(id, body.version, {}, trx);
      await this.mappings.get(id, mappingId, trx);
      const patch: { variable?: string | null; variable_kind?: VariableKind | null; value?: unknown } = {};
      if (body.variable !== undefined) {
        const v = body.variable === null ? undefined : s.template_variables.find((t) => t.name === body.variable);
        if (body.variable !== null && !v) {
          throw new ValidationError(
            `variable '${body.variable}' is not a template variable of the dataset's SQL (${s.template_variables.map((t) => t.name).join(', ') || 'it has none'})`,
            [{ field: 'body.variable', message: 'not a template variable of the dataset' }],
          );
        }
        patch.variable = v?.name ?? null;
        patch.variable_kind = v?.kind ?? null;
      }
      if (body.value !== undefined) patch.value = body.value;
      const m = await this.mappings.patch(trx, id, mappingId, patch, p.userId);
      return { version: s.version, mapping: mappingOut(m) };
    });
  }

  async approveMappings(p: Principal, id: string, body: { version: number; mapping_ids?: string[] }) {
    return this.stores.transaction(async (trx) => {
      const s = await this.sessionsOf(p).advance(id, body.version, {}, trx);
      await this.mappings.approve(trx, id, body.mapping_ids ?? null, p.userId);
      return { version: s.version, mappings: (await this.mappings.list(id, trx)).map(mappingOut) };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // clarification

  async clarification(p: Principal, id: string) {
    const s = await this.sessionsOf(p).get(id);
    const qs = await this.openQuestions(s);
    return clarificationOut(s, qs, (await this.clarifications.list(id)).length);
  }

  private async openQuestions(s: SessionRow, trx?: Transaction): Promise<Question[]> {
    return questions(s, await this.fields.list(s.id, trx), await this.mappings.list(s.id, trx), await this.clarifications.list(s.id, trx));
  }

  async answer(
    p: Principal,
    id: string,
    body: { version: number; question_key: string; answer: Answer; feedback?: 'useful' | 'wrong'; feedback_comment?: string | null },
  ) {
    const s = await this.sessionsOf(p).get(id);
    if (s.version !== body.version) await this.sessionsOf(p).advance(id, body.version); // the 409
    const current = (await this.openQuestions(s))[0];
    if (!current || current.key !== body.question_key) {
      throw new ConflictError(
        current ? `The current question is '${current.key}', not '${body.question_key}'` : 'There is no open question',
        'not_current_question',
        { current_question: current?.key ?? null },
      );
    }
    const option = body.answer.option;
    const allowed = current.options.map((o) => o.value);
    if (!allowed.includes(option)) {
      throw new ValidationError(`answer.option must be one of ${allowed.join(', ')}`, [
        { field: 'body.answer.option', message: `one of ${allowed.join(', ')}` },
      ]);
    }
    const record = (trx: Transaction, version: number) =>
      this.clarifications.record(trx, {
        session_id: id,
        question_key: current.key,
        kind: current.kind,
        question: current.text,
        options: current.options,
        answer: body.answer,
        session_version: version,
        feedback: body.feedback ?? null,
        feedback_comment: body.feedback_comment ?? null,
        answered_by: p.userId,
        answered_by_username: p.username,
      });
    if (current.kind === 'dataset_choice') {
      // The answer is recorded in the same transaction, before the session takes the dataset.
      await this.chooseDataset(p, id, body.version, Number(option), {}, async (trx) => void (await record(trx, body.version)));
    } else {
      await this.stores.transaction(async (trx) => {
        await this.sessionsOf(p).advance(id, body.version, {}, trx);
        await record(trx, body.version);
        await applyAnswer(this, trx, p, s, current, body.answer);
      });
    }
    const after = await this.sessionsOf(p).get(id);
    return clarificationOut(after, await this.openQuestions(after), (await this.clarifications.list(id)).length);
  }

  // ---------------------------------------------------------------------------------------------
  // preview

  async preview(p: Principal, id: string, version: number) {
    const s = mayPreview(p, await this.sessionsOf(p).get(id));
    if (s.version !== version) await this.sessionsOf(p).advance(id, version); // the 409
    if (!s.dataset) throw new ConflictError('The session has no dataset to preview: answer the clarification or choose one', 'no_dataset');
    const [fields, mappings] = await Promise.all([this.fields.list(id), this.mappings.list(id)]);
    const snapshot = buildSnapshot(s.imported_filters, mappings);
    const columns = fields.filter((f) => f.kind === 'column').map((f) => f.name);
    const result: Preview = await this.supersets.use(s.env_id, (client) => runPreview(client, s.dataset!, columns, snapshot));
    // The preview is true of the version it creates; any later change makes it stale (launch refuses a stale one).
    const next = await this.sessionsOf(p).advance(id, version, {
      preview: { ...result, at_version: version + 1 } as unknown as Record<string, unknown>,
    });
    return { version: next.version, preview: { ...result, at_version: next.version } };
  }

  // ---------------------------------------------------------------------------------------------
  // exports

  async documentation(p: Principal, id: string): Promise<string> {
    return documentation(this.exportStores, p, id);
  }

  async validation(p: Principal, id: string) {
    return validation(this.exportStores, p, id);
  }

  // ---------------------------------------------------------------------------------------------
  // dictionaries

  async addDictionaryVersion(p: Principal, dictionaryId: string, file: UploadedFile) {
    return addDictionaryVersion({ ...this.exportStores, stores: this.stores }, p, dictionaryId, file);
  }

  // ---------------------------------------------------------------------------------------------
  // answers

  summary(s: SessionRow) {
    return sessionSummary(s);
  }

  async view(s: SessionRow, p: Principal, trx?: Transaction) {
    return sessionView(this, s, p, trx);
  }
}
