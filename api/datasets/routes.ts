import { createHash } from 'node:crypto';
import type { DictionarySource, MapColumnsResult } from '../../contracts/datasets.ts';
import { parseDictionaryWorkbook } from '../../lib/dictionary/xlsx.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { displayName } from '../../lib/superset/client.ts';
import type { DatasetListItem } from '../../lib/superset/types.ts';
import type { AppContext } from '../context.ts';
import { datasetListQuery, datasetsResponse } from '../dashboards/schemas.ts';
import { defineRoute, type AnyRoute, type UploadedFile } from '../http/routes.ts';
import { hidesQueryRows } from '../tasks/query-rows.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { taskAccepted } from '../tasks/schemas.ts';
import {
  acceptAnswer,
  acceptBody,
  changeList,
  changeParams,
  changesQuery,
  datasetParams,
  generateDocsBody,
  mapColumnsBody,
  mapColumnsForm,
  rejectAnswer,
  rejectBody,
  suggestionList,
  suggestionsQuery,
  undoAnswer,
  undoBody,
} from './schemas.ts';
import { dashboardsOfDatasets, llmDocsInput } from './input.ts';
import { checkSqlLabSource } from './sqllab-source.ts';
import { impactPreview, impactPreviews } from '../impact/preview.ts';

/** Largest workbook accepted (the upload is held in memory and parsed once). */
export const MAX_WORKBOOK_BYTES = 5 * 1024 * 1024;
/** Longest the task-creating routes wait for Superset to name the dashboards using the datasets. */

function iso(value: string | null | undefined): string | null {
  if (!value) return null;
  const d = new Date(value.replace(/(\.\d{3})\d+/, '$1').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function toDatasetItem(baseUrl: string, d: DatasetListItem) {
  return {
    id: d.id,
    uuid: d.uuid ?? null,
    table_name: d.table_name,
    schema: d.schema ?? null,
    catalog: d.catalog ?? null,
    kind: d.kind ?? (d.sql ? 'virtual' : 'physical'),
    sql: d.sql ?? null,
    description: d.description ?? null,
    database: d.database ? { id: d.database.id, name: d.database.database_name, uuid: d.database.uuid ?? null } : null,
    owners: (d.owners ?? []).map((o) => ({
      id: typeof o.id === 'number' ? o.id : null,
      first_name: o.first_name ?? null,
      last_name: o.last_name ?? null,
      display_name: displayName(o),
    })),
    changed_by_name: d.changed_by_name ?? null,
    changed_on: iso(d.changed_on_utc),
    explore_url: d.explore_url ? `${baseUrl}${d.explore_url.startsWith('/') ? '' : '/'}${d.explore_url}` : null,
  };
}

export function datasetRoutes(app: AppContext): AnyRoute[] {
  const review = app.suggestionReview;
  const dictionaries = app.stores.datasetDictionaries;
  const providers = app.stores.llmProviders;
  const UNAVAILABLE = {
    description: 'Superset unreachable, timed out, failed or refused the service account (code `upstream_unavailable`)',
  };

  /**
   * The dashboards using the datasets, so the task shows in their history
   * (`GET /api/dashboards/{id}/tasks`). Best effort and bounded in time: a dataset Superset cannot
   * name now still gets its task, and the task reports the dataset's own failure.
   */
  function dashboardsOf(envId: string, datasetIds: number[]): Promise<number[]> {
    return dashboardsOfDatasets(app.supersets, app.logger, envId, datasetIds);
  }

  /** Stores an uploaded workbook (parsed and checked now: a bad one is a 400) and returns its id. */
  async function storeWorkbook(file: UploadedFile, sheet: string | undefined, createdBy: string | null) {
    const parsed = await parseDictionaryWorkbook(file.bytes, { sheet });
    return dictionaries.create({
      source: 'xlsx',
      filename: file.filename ? file.filename.slice(0, 255) : null,
      sheet: parsed.sheet,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
      size: file.size,
      rows: parsed.entries,
      createdBy,
    });
  }

  /** A reviewed dry run: a finished map_columns dry run of the same environment covering every requested dataset. */
  async function checkReviewed(taskId: string, envId: string, datasetIds: number[], principal: Parameters<typeof app.tasks.getVisible>[1]) {
    const task = await app.tasks.getVisible(taskId, principal);
    // Applying a plan would write the rows of another person's query where the caller can read them.
    if (hidesQueryRows(task, principal)) {
      throw new ForbiddenError(
        `reviewed_task_id: task ${taskId} planned from its owner's own SQL query; only its owner or an admin may apply that plan`,
      );
    }
    const result = task.result as MapColumnsResult | null;
    const problem =
      task.type !== 'map_columns'
        ? 'is not a column-mapping task'
        : !task.env_ids.includes(envId)
          ? 'ran in another environment'
          : !['SUCCEEDED', 'FAILED'].includes(task.status) || !result?.items
            ? `has no finished plan (it is ${task.status})`
            : !result.dry_run
              ? 'was not a dry run'
              : undefined;
    if (problem)
      throw new ValidationError(`reviewed_task_id: task ${taskId} ${problem}`, [{ field: 'body.reviewed_task_id', message: problem }]);
    const planned = new Set(result!.items.filter((i) => i.status === 'planned' || i.status === 'unchanged').map((i) => i.id));
    const missing = datasetIds.filter((id) => !planned.has(id));
    if (missing.length) {
      throw new ValidationError(`reviewed_task_id: the dry run ${taskId} has no plan for dataset(s) ${missing.join(', ')}`, [
        { field: 'body.dataset_ids', message: `not planned by the reviewed dry run: ${missing.join(', ')}` },
      ]);
    }
  }

  return [
    defineRoute({
      method: 'get',
      path: '/api/datasets',
      tag: 'Datasets',
      summary: 'List the datasets of an environment',
      description:
        'Ordered by table name; paging and the optional `search` (table name substring) run in Superset, `total` is exact. Any depth is served as Superset serves it, past 10,000 rows included (past the last row the page is empty).',
      access: { permission: 'datasets:READ' },
      query: datasetListQuery,
      responses: {
        200: { description: 'A page of datasets (DatasetsResponse)', schema: datasetsResponse },
        400: { description: 'Bad pagination (`page` < 1 or past 1000000000, `page_size` outside 1..100) or missing `env_id`' },
        404: { description: 'Unknown environment' },
        503: { description: 'Superset unreachable, timed out, failed or refused the service account (code `upstream_unavailable`)' },
      },
      async handler(_ctx, { query }) {
        return app.supersets.use(query.env_id, async (client, env) => {
          const res = await client.datasets.list({
            filters: query.search ? [{ col: 'table_name', opr: 'ct', value: query.search }] : [],
            page: query.page - 1,
            pageSize: query.page_size,
          });
          return {
            items: res.result.map((d) => toDatasetItem(env.base_url, d)),
            total: res.count,
            page: query.page,
            page_size: query.page_size,
            has_next: query.page * query.page_size < res.count,
            env_id: env.id,
          };
        });
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/datasets/map-columns',
      tag: 'Datasets',
      summary: 'Fill column labels and descriptions from a dictionary (a task)',
      description:
        "Matches a dictionary (from SQL Lab or an xlsx workbook) to each dataset's columns by name and fills their labels and descriptions through the safe dataset writer, keeping the previous values for undo. Details: docs/datasets.md#post-apidatasetsmap-columns.",
      access: taskAccess('map_columns'),
      body: mapColumnsBody,
      multipart: {
        fields: mapColumnsForm,
        files: { file: { description: 'the .xlsx workbook (at most 5 MB)' } },
        maxFileBytes: MAX_WORKBOOK_BYTES,
      },
      responses: {
        202: { description: 'Task accepted', schema: taskAccepted },
        400: {
          description:
            "Invalid body (see description), a dataset of another database than `database_id`, or `sql` that is not one read-only SELECT for the database's dialect",
        },
        403: {
          description:
            "`reviewed_task_id` names a dry run planned from another person's own SQL query (only its owner or an admin may apply it)",
        },
        404: { description: 'Unknown environment, `database_id`, `upload_id` or `reviewed_task_id`, or none of `dataset_ids` exists' },
        413: { description: 'The workbook is larger than 5 MB' },
        503: UNAVAILABLE,
      },
      async handler(ctx, { body, files, principal }) {
        const env = await app.stores.environments.get(body.env_id);
        let source: DictionarySource;
        let uploadId: string | undefined;
        if (body.source_type === 'sqllab') {
          const b = body as typeof body & { sql?: string; schema?: string; catalog?: string };
          // Checked against Superset before anything runs; the task runs the parser's rendering.
          const checked = await checkSqlLabSource(app.supersets, {
            envId: env.id,
            databaseId: b.database_id!,
            datasetIds: body.dataset_ids,
            sql: b.sql ?? null,
          });
          source = { type: 'sqllab', databaseId: b.database_id!, sql: checked.sql, schema: b.schema ?? null, catalog: b.catalog ?? null };
        } else {
          const b = body as typeof body & { upload_id?: string; sheet?: string };
          if (files.file) {
            uploadId = (await storeWorkbook(files.file, b.sheet, principal.userId)).id;
          } else if (b.upload_id) {
            // Only a workbook: the rows a task's own SQL query returned are stored the same way, and are its owner's.
            if ((await dictionaries.info(b.upload_id))?.source !== 'xlsx') throw new NotFoundError('Upload', b.upload_id);
            uploadId = b.upload_id;
          } else if (!b.reviewed_task_id) {
            throw new ValidationError('source_type xlsx needs the workbook in the file field `file`', [
              { field: 'body.file', message: 'required' },
            ]);
          }
          source = { type: 'xlsx', dictionaryId: uploadId ?? '' };
        }
        if (body.reviewed_task_id) await checkReviewed(body.reviewed_task_id, env.id, body.dataset_ids, principal);
        const params: Record<string, unknown> = { ...body, ...(uploadId ? { upload_id: uploadId } : {}) };
        delete params.sheet;
        // A dry run is what a person reviews before the write: it shows what uses each dataset (api/impact).
        if (body.dry_run) params.impact = await impactPreviews(app, env.id, body.dataset_ids);
        await acceptTask(ctx, app, {
          kind: 'map_columns',
          input: {
            envId: env.id,
            datasetIds: body.dataset_ids,
            source,
            dryRun: body.dry_run,
            overwrite: body.overwrite,
            reviewedTaskId: body.reviewed_task_id ?? null,
            dashboardIds: await dashboardsOf(env.id, body.dataset_ids),
          },
          params,
          owner: principal,
        });
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/datasets/generate-docs',
      tag: 'Datasets',
      summary: 'Suggest dataset and column descriptions with an LLM (a task)',
      description:
        'Asks the LLM provider for a description of each dataset and its columns and stores the answers as suggestions; nothing reaches Superset until a person accepts them. Details: docs/datasets.md#post-apidatasetsgenerate-docs.',
      access: taskAccess('llm_docs'),
      body: generateDocsBody,
      responses: {
        202: { description: 'Task accepted', schema: taskAccepted },
        400: { description: 'Invalid body (empty `dataset_ids`, unknown `language`)' },
        404: { description: 'Unknown environment or LLM provider' },
      },
      async handler(ctx, { body, principal }) {
        const env = await app.stores.environments.get(body.env_id);
        if (!(await providers.exists(body.llm_provider, app.config))) throw new NotFoundError('LLM provider', body.llm_provider);
        await acceptTask(ctx, app, {
          kind: 'llm_docs',
          ...llmDocsInput({ ...body, env_id: env.id }, await dashboardsOf(env.id, body.dataset_ids)),
          owner: principal,
        });
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/datasets/:dataset_id/suggestions',
      tag: 'Datasets',
      summary: "A dataset's LLM suggestions beside its current values",
      description:
        "A dataset's suggestions (pending by default), each beside the value Superset holds now, with its provenance. Details: docs/datasets.md#get-apidatasetsdataset_idsuggestions.",
      access: { permission: 'datasets:READ' },
      params: datasetParams,
      query: suggestionsQuery,
      responses: {
        200: { description: 'A page of suggestions', schema: suggestionList },
        404: { description: 'Unknown environment, or no such dataset in it' },
        503: UNAVAILABLE,
      },
      handler: (_ctx, { params, query }) =>
        review.listSuggestions(query.env_id, params.dataset_id, query.status, query.page, query.page_size),
    }),

    defineRoute({
      method: 'post',
      path: '/api/datasets/:dataset_id/suggestions/accept',
      tag: 'Datasets',
      summary: 'Accept suggestions (as suggested or edited) and write them into Superset',
      description:
        "Accepts the dataset's pending suggestions (or the listed `items`, optionally edited) and writes them into Superset in one safe dataset update; in a protected environment it waits for approval. Details: docs/datasets.md#post-apidatasetsdataset_idsuggestionsaccept.",
      access: { permission: 'datasets:WRITE' },
      params: datasetParams,
      body: acceptBody,
      responses: {
        200: { description: 'What was accepted and written, and what was skipped and why', schema: acceptAnswer },
        202: { description: 'A protected environment: a `dataset_change` task waiting for approval', schema: taskAccepted },
        404: { description: 'Unknown environment, or no such dataset in it' },
        409: { description: 'The dataset changed in Superset during the write (code `dataset_changed`); nothing was written' },
        503: UNAVAILABLE,
      },
      async handler(ctx, { params, body, principal }) {
        const env = await app.stores.environments.get(body.env_id);
        if (!env.protected) return review.accept(env.id, params.dataset_id, body.items, principal);
        await acceptTask(ctx, app, {
          kind: 'dataset_change',
          input: {
            envId: env.id,
            datasetId: params.dataset_id,
            operation: { type: 'accept', items: body.items ?? null },
            actor: { id: principal.userId, username: principal.username },
          },
          // The approver sees what uses the dataset before approving (api/impact).
          params: {
            env_id: env.id,
            dataset_id: params.dataset_id,
            items: body.items ?? null,
            impact: await impactPreview(app, env.id, params.dataset_id),
          },
          owner: principal,
        });
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/datasets/:dataset_id/suggestions/reject',
      tag: 'Datasets',
      summary: 'Reject suggestions',
      description: 'Rejects every pending suggestion of the dataset, or the listed ones; nothing is written to Superset.',
      access: { permission: 'datasets:WRITE' },
      params: datasetParams,
      body: rejectBody,
      responses: { 200: { description: 'How many were rejected', schema: rejectAnswer }, 404: { description: 'Unknown environment' } },
      handler: (_ctx, { params, body, principal }) => review.reject(body.env_id, params.dataset_id, body.suggestion_ids, principal),
    }),

    defineRoute({
      method: 'get',
      path: '/api/datasets/:dataset_id/changes',
      tag: 'Datasets',
      summary: 'Changes Switchyard wrote into a dataset',
      description:
        'Newest first: each write with the fields it changed (values before and after), who made it (task owner or the person who accepted), its source and whether it was undone.',
      access: { permission: 'datasets:READ' },
      params: datasetParams,
      query: changesQuery,
      responses: { 200: { description: 'A page of changes', schema: changeList }, 404: { description: 'Unknown environment' } },
      handler: (_ctx, { params, query }) => review.listChanges(query.env_id, params.dataset_id, query.page, query.page_size),
    }),

    defineRoute({
      method: 'post',
      path: '/api/datasets/changes/:change_id/undo',
      tag: 'Datasets',
      summary: 'Undo a change: restore the values it replaced',
      description:
        'Writes the previous values back through the same safe update and records the undo as a change of its own. Details: docs/datasets.md#post-apidatasetschangeschange_idundo.',
      access: { permission: 'datasets:WRITE' },
      params: changeParams,
      body: undoBody,
      responses: {
        200: { description: 'The undo and the change it undid', schema: undoAnswer },
        202: { description: 'A protected environment: a `dataset_change` task waiting for approval', schema: taskAccepted },
        404: { description: 'Unknown change, or its dataset no longer exists' },
        409: { description: 'Changed since (`dataset_changed`) or nothing to undo (`not_undoable`)' },
        503: UNAVAILABLE,
      },
      async handler(ctx, { params, body, principal }) {
        const change = await review.changeToUndo(params.change_id);
        const env = await app.stores.environments.get(change.env_id);
        if (!env.protected) return review.undo(params.change_id, body.force, principal);
        await acceptTask(ctx, app, {
          kind: 'dataset_change',
          input: {
            envId: env.id,
            datasetId: change.dataset_id,
            operation: { type: 'undo', changeId: change.id, force: body.force },
            actor: { id: principal.userId, username: principal.username },
          },
          params: { change_id: change.id, force: body.force },
          owner: principal,
        });
      },
    }),
  ];
}
