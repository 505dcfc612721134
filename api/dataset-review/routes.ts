import { permissions } from '../../contracts/permissions.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { taskAccess } from '../tasks/routes.ts';
import { launchSession } from './launch.ts';
import { impactPreview } from '../impact/preview.ts';
import {
  answerBody,
  approveBody,
  clarificationAnswer,
  dictionaryAnswer,
  dictionaryBody,
  dictionaryList,
  dictionaryParams,
  dictionaryVersionAnswer,
  feedbackAnswer,
  feedbackBody,
  fieldAnswer,
  fieldParams,
  launchAccepted,
  listQuery,
  mappingAnswer,
  mappingParams,
  mappingPatchBody,
  mappingsAnswer,
  overrideBody,
  patchBody,
  previewAnswer,
  sessionAnswer,
  sessionList,
  sessionParams,
  startBody,
  validationAnswer,
  versionBody,
  versionForm,
  versionQuery,
} from './schemas.ts';
import { versionOut } from './service.ts';

const TAG = 'Dataset review';
const BASE = '/api/dataset-review/sessions';
const READ = { permission: permissions.datasetReview.read } as const;
const WRITE = { permission: permissions.datasetReview.write } as const;
/** Largest dictionary file accepted (held in memory and parsed once). */
const MAX_DICTIONARY_BYTES = 5 * 1024 * 1024;

const NOT_OWN = "Unknown session, or another user's (sessions are visible to their owner only)";
const STALE = { description: 'Stale `version`: `code: version_conflict` with `current_version`; nothing changed' };

export function datasetReviewRoutes(app: AppContext): AnyRoute[] {
  const review = app.reviews;

  return [
    defineRoute({
      method: 'post',
      path: BASE,
      tag: TAG,
      summary: 'Start a review from a Superset dashboard link',
      description:
        'Starts a review session from a dashboard link or permalink: recovers the dashboard, its dataset, native filters, template variables, proposed mappings and semantic fields. Details: docs/dataset-review.md#post-apidataset-reviewsessions.',
      access: WRITE,
      body: startBody,
      responses: {
        201: { description: 'The session (state `ready` or `recovery-required`)', schema: sessionAnswer },
        400: { description: 'Invalid body, or a link that is not a Superset dashboard link' },
        404: { description: 'Unknown environment' },
        503: { description: 'Superset unreachable or failing (code `upstream_unavailable`); nothing was stored' },
      },
      handler: (_ctx, { body, principal }) => review.start(principal, body.env_id, body.link),
    }),

    defineRoute({
      method: 'get',
      path: BASE,
      tag: TAG,
      summary: 'Your review sessions',
      description: "The caller's own sessions, most recently changed first.",
      access: READ,
      query: listQuery,
      responses: { 200: { description: 'A page of sessions', schema: sessionList }, 400: { description: 'Bad pagination' } },
      handler: (_ctx, { query, principal }) => review.list(principal, query.page, query.page_size),
    }),

    defineRoute({
      method: 'get',
      path: `${BASE}/:session_id`,
      tag: TAG,
      summary: 'A review session',
      description: 'Everything recovered and reviewed so far, with the session `version` every change must carry.',
      access: READ,
      params: sessionParams,
      responses: {
        200: { description: 'The session', schema: sessionAnswer },
        400: { description: 'Not a session id' },
        404: { description: NOT_OWN },
      },
      handler: (_ctx, { params, principal }) => review.get(principal, params.session_id),
    }),

    defineRoute({
      method: 'patch',
      path: `${BASE}/:session_id`,
      tag: TAG,
      summary: 'Change a session: title, note, or the reviewed dataset',
      description: '`dataset_id` picks one of `candidate_datasets`; its fields, filter checks and mappings are recovered anew.',
      access: WRITE,
      params: sessionParams,
      body: patchBody,
      responses: {
        200: { description: 'The session', schema: sessionAnswer },
        400: { description: 'Invalid body, or a dataset not behind the dashboard' },
        404: { description: NOT_OWN },
        409: STALE,
        503: { description: 'Superset unavailable' },
      },
      handler: (_ctx, { params, body, principal }) => review.patch(principal, params.session_id, body),
    }),

    defineRoute({
      method: 'delete',
      path: `${BASE}/:session_id`,
      tag: TAG,
      summary: 'Delete a session',
      description: 'Carries the version as the query parameter `version`.',
      access: WRITE,
      params: sessionParams,
      query: versionQuery,
      responses: {
        204: { description: 'Deleted' },
        400: { description: 'Missing or invalid `version`' },
        404: { description: NOT_OWN },
        409: STALE,
      },
      async handler(ctx, { params, query, principal }) {
        await review.delete(principal, params.session_id, query.version);
        ctx.status = 204;
      },
    }),

    defineRoute({
      method: 'get',
      path: `${BASE}/:session_id/clarification`,
      tag: TAG,
      summary: 'The current clarification question',
      description:
        "One question at a time about what blocks the review: which dataset, which variable an unmapped filter fills, whether to take a changed dictionary's candidate, what an unresolved field means. `question: null` and `blocking: false` when nothing blocks.",
      access: READ,
      params: sessionParams,
      responses: {
        200: { description: 'The clarification state', schema: clarificationAnswer },
        400: { description: 'Not a session id' },
        404: { description: NOT_OWN },
      },
      handler: (_ctx, { params, principal }) => review.clarification(principal, params.session_id),
    }),

    defineRoute({
      method: 'post',
      path: `${BASE}/:session_id/clarification/answers`,
      tag: TAG,
      summary: 'Answer the current question',
      description:
        'The answer (with optional `feedback` on the question) is stored as an audit record before the session advances; the answer names the next question. 409 `not_current_question` when `question_key` is not the current one.',
      access: WRITE,
      params: sessionParams,
      body: answerBody,
      responses: {
        200: { description: 'The next clarification state', schema: clarificationAnswer },
        400: { description: 'Invalid body or option' },
        404: { description: NOT_OWN },
        409: { description: 'Stale `version` (`version_conflict`), or not the current question (`not_current_question`)' },
        503: { description: 'Superset unavailable (choosing a dataset reads it)' },
      },
      handler: (_ctx, { params, body, principal }) => review.answer(principal, params.session_id, body),
    }),

    defineRoute({
      method: 'put',
      path: `${BASE}/:session_id/fields/:field_id`,
      tag: TAG,
      summary: "Set a field's meaning by hand",
      description:
        'Sets the label and/or description, locks the field (a dictionary change keeps it) and records who and when (`provenance: manual`).',
      access: WRITE,
      params: fieldParams,
      body: overrideBody,
      responses: {
        200: { description: 'The field and the new version', schema: fieldAnswer },
        400: { description: 'Invalid body' },
        404: { description: `${NOT_OWN}, or unknown field` },
        409: STALE,
      },
      handler: (_ctx, { params, body, principal }) => review.overrideField(principal, params.session_id, params.field_id, body),
    }),

    ...(['lock', 'unlock'] as const).map((op) =>
      defineRoute({
        method: 'post',
        path: `${BASE}/:session_id/fields/:field_id/${op}`,
        tag: TAG,
        summary:
          op === 'lock'
            ? 'Lock a field: a dictionary change keeps its value'
            : 'Unlock a field: a dictionary change may mark it for review',
        access: WRITE,
        params: fieldParams,
        body: versionBody,
        responses: {
          200: { description: 'The field and the new version', schema: fieldAnswer },
          400: { description: 'Invalid body' },
          404: { description: `${NOT_OWN}, or unknown field` },
          409: STALE,
        },
        handler: (_ctx, { params, body, principal }) =>
          review.lockField(principal, params.session_id, params.field_id, body.version, op === 'lock'),
      }),
    ),

    defineRoute({
      method: 'post',
      path: `${BASE}/:session_id/fields/:field_id/feedback`,
      tag: TAG,
      summary: "Say whether a field's meaning is useful or wrong",
      description: 'Stored apart from the value, with the value it judged.',
      access: WRITE,
      params: fieldParams,
      body: feedbackBody,
      responses: {
        200: { description: 'The feedback and the new version', schema: feedbackAnswer },
        400: { description: 'Invalid body' },
        404: { description: `${NOT_OWN}, or unknown field` },
        409: STALE,
      },
      handler: (_ctx, { params, body, principal }) => review.fieldFeedback(principal, params.session_id, params.field_id, body),
    }),

    defineRoute({
      method: 'patch',
      path: `${BASE}/:session_id/mappings/:mapping_id`,
      tag: TAG,
      summary: 'Change a mapping by hand',
      description:
        'Sets the template variable the filter fills and/or a value used instead of the imported one; kept as a manual override, and approved no longer.',
      access: WRITE,
      params: mappingParams,
      body: mappingPatchBody,
      responses: {
        200: { description: 'The mapping and the new version', schema: mappingAnswer },
        400: { description: 'Invalid body or unknown variable' },
        404: { description: `${NOT_OWN}, or unknown mapping` },
        409: STALE,
      },
      handler: (_ctx, { params, body, principal }) => review.patchMapping(principal, params.session_id, params.mapping_id, body),
    }),

    defineRoute({
      method: 'post',
      path: `${BASE}/:session_id/mappings/approve`,
      tag: TAG,
      summary: 'Approve mappings',
      description: "Approves the listed mappings, or all of the session's. Launch needs every mapping approved.",
      access: WRITE,
      params: sessionParams,
      body: approveBody,
      responses: {
        200: { description: 'Every mapping and the new version', schema: mappingsAnswer },
        400: { description: 'Invalid body' },
        404: { description: NOT_OWN },
        409: STALE,
      },
      handler: (_ctx, { params, body, principal }) => review.approveMappings(principal, params.session_id, body),
    }),

    defineRoute({
      method: 'post',
      path: `${BASE}/:session_id/preview`,
      tag: TAG,
      summary: 'Preview the reviewed query',
      description:
        "Has Superset compile the dataset query with the session's filters and variables, runs it read-only through SQL Lab with a row limit, and answers the SQL, the first rows, the row count and the new session `version`. Details: docs/dataset-review.md#post-apidataset-reviewsessionssession_idpreview.",
      access: WRITE,
      params: sessionParams,
      body: versionBody,
      responses: {
        200: { description: 'The preview and the new version', schema: previewAnswer },
        400: { description: 'Invalid body' },
        403: { description: "Without `datasets:READ`: a preview shows the dataset's rows" },
        404: { description: NOT_OWN },
        409: { description: 'Stale `version` (`version_conflict`), or no dataset chosen (`no_dataset`)' },
        503: { description: 'Superset unreachable' },
      },
      async handler(_ctx, { params, body, principal }) {
        const answer = await review.preview(principal, params.session_id, body.version);
        // Before the launch is confirmed: what uses the dataset the launch writes into (api/impact).
        const s = await review.sessionsOf(principal).get(params.session_id);
        return { ...answer, impact: s.dataset ? await impactPreview(app, s.env_id, s.dataset.id) : null };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${BASE}/:session_id/launch`,
      tag: TAG,
      summary: 'Launch the reviewed dataset (a task)',
      description:
        'Starts a `dataset_launch` task that writes the reviewed labels and descriptions into the Superset dataset and saves the previewed SQL as a saved query; the 202 answers the audited handoff. Details: docs/dataset-review.md#post-apidataset-reviewsessionssession_idlaunch.',
      access: taskAccess('dataset_launch'),
      params: sessionParams,
      body: versionBody,
      responses: {
        202: { description: 'Task accepted, with the audited handoff (`handoff`)', schema: launchAccepted },
        400: { description: 'Invalid body' },
        403: { description: 'Missing `dataset_review:LAUNCH`' },
        404: { description: NOT_OWN },
        409: {
          description:
            'Stale `version` (`version_conflict`); no dataset (`no_dataset`); unapproved mappings (`mappings_unapproved`); no succeeded preview of this version (`preview_required`)',
        },
      },
      handler: (ctx, { params, body, principal }) => launchSession(ctx, app, principal, params.session_id, body.version),
    }),

    defineRoute({
      method: 'get',
      path: `${BASE}/:session_id/exports/documentation`,
      tag: TAG,
      summary: 'The review as Markdown documentation',
      description: 'The dataset, its fields with meanings and provenance, the filters and mappings, and what was not recovered.',
      access: READ,
      params: sessionParams,
      responses: {
        200: { description: 'Markdown', contentType: 'text/markdown' },
        400: { description: 'Not a session id' },
        404: { description: NOT_OWN },
      },
      async handler(ctx, { params, principal }) {
        ctx.body = await review.documentation(principal, params.session_id);
        ctx.type = 'text/markdown; charset=utf-8';
        ctx.status = 200;
      },
    }),

    defineRoute({
      method: 'get',
      path: `${BASE}/:session_id/exports/validation`,
      tag: TAG,
      summary: "The review's validation checks",
      description:
        'Every check with pass/fail: recovery, dataset chosen, unresolved fields, fields waiting for review, unapproved mappings, the preview of the current version, a stale dictionary.',
      access: READ,
      params: sessionParams,
      responses: {
        200: { description: 'The checks', schema: validationAnswer },
        400: { description: 'Not a session id' },
        404: { description: NOT_OWN },
      },
      handler: (_ctx, { params, principal }) => review.validation(principal, params.session_id),
    }),

    // --- semantic dictionaries (admin) ---------------------------------------------------------

    defineRoute({
      method: 'get',
      path: '/api/dataset-review/dictionaries',
      tag: TAG,
      summary: 'Trusted semantic dictionaries',
      access: 'admin',
      query: listQuery,
      responses: { 200: { description: 'A page of dictionaries', schema: dictionaryList }, 400: { description: 'Bad pagination' } },
      async handler(_ctx, { query }) {
        const { rows, total } = await review.dictionaries.list(query.page, query.page_size);
        return {
          items: rows.map(dictOut),
          total,
          page: query.page,
          page_size: query.page_size,
          has_next: query.page * query.page_size < total,
        };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/dataset-review/dictionaries',
      tag: TAG,
      summary: 'Create a semantic dictionary',
      description:
        'Its entries come with versions (`POST .../versions`). New sessions rank fields against the most recently updated dictionary.',
      access: 'admin',
      body: dictionaryBody,
      responses: {
        201: { description: 'The dictionary', schema: dictionaryAnswer },
        400: { description: 'Invalid body' },
        409: { description: 'The name is taken (`name_taken`)' },
      },
      handler: async (_ctx, { body, principal }) =>
        dictOut(await review.dictionaries.create({ name: body.name, description: body.description ?? null, createdBy: principal.userId })),
    }),

    defineRoute({
      method: 'get',
      path: '/api/dataset-review/dictionaries/:dictionary_id',
      tag: TAG,
      summary: 'A semantic dictionary with its versions',
      access: 'admin',
      params: dictionaryParams,
      responses: {
        200: { description: 'The dictionary', schema: dictionaryAnswer },
        400: { description: 'Not a dictionary id' },
        404: { description: 'Unknown dictionary' },
      },
      async handler(_ctx, { params }) {
        const d = await review.dictionaries.get(params.dictionary_id);
        return { ...dictOut(d), versions: (await review.dictionaries.versions(d.id)).map((v) => versionOut(v)) };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/dataset-review/dictionaries/:dictionary_id/versions',
      tag: TAG,
      summary: 'Upload a new version of a dictionary (CSV or xlsx)',
      description:
        'Uploads a CSV or xlsx dictionary as the new current version; unlocked fields of sessions ranked against it become `needs_review`. Details: docs/dataset-review.md#post-apidataset-reviewdictionariesdictionary_idversions.',
      access: 'admin',
      params: dictionaryParams,
      body: versionForm,
      multipart: {
        fields: versionForm,
        files: { file: { description: 'the .csv or .xlsx dictionary (at most 5 MB)', required: true } },
        maxFileBytes: MAX_DICTIONARY_BYTES,
      },
      responses: {
        201: { description: 'The new version, and how many sessions and fields it touched', schema: dictionaryVersionAnswer },
        400: { description: 'No file, or a file that is not a readable dictionary (the row is named)' },
        404: { description: 'Unknown dictionary' },
        413: { description: 'The file is larger than 5 MB' },
      },
      async handler(_ctx, { params, files, principal }) {
        if (!files.file)
          throw new ValidationError('send the dictionary as multipart/form-data in the file field `file`', [
            { field: 'body.file', message: 'required' },
          ]);
        return review.addDictionaryVersion(principal, params.dictionary_id, files.file);
      },
    }),
  ];
}

function dictOut(d: { id: string; name: string; description: string | null; current_version: number; created_at: Date; updated_at: Date }) {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    current_version: d.current_version,
    created_at: new Date(d.created_at).toISOString(),
    updated_at: new Date(d.updated_at).toISOString(),
  };
}
