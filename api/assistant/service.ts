/**
 * The assistant: a second way in to what the other routes do. A message is parsed
 * (lib/assistant/parser.ts), checked against the caller's own permissions, its names resolved
 * against what the caller can see, and then answered: read-only operations run at once through
 * the same services as their routes; risky ones become a confirmation (a row and a workflow that
 * waits for the owner's `confirm` or `cancel` update, or expires). Confirming starts the task
 * through the same task service and registry as the direct route, under an idempotency key, so
 * confirming twice never starts two tasks.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import {
  ASSISTANT_CONFIRMATION_WORKFLOW,
  CANCEL_UPDATE,
  CONFIRM_UPDATE,
  confirmationWorkflowId,
  type AssistantConfirmationInput,
  type ConfirmationState,
} from '../../contracts/assistant.ts';
import { TASK_KINDS, type TaskKind, type TaskKindName } from '../../contracts/task-kinds.ts';
import type { AuditDecision, AuditStore } from '../../db/assistant/audit.ts';
import type { ConfirmationRow, ConfirmationStore, PlannedAction } from '../../db/assistant/confirmations.ts';
import type { ConversationStore } from '../../db/assistant/conversations.ts';
import { DEFAULT_PROVIDER_ID, type LlmProviderStore } from '../../db/llm-providers/store.ts';
import { parseCommand, type Intent, type Language, type ParseResult } from '../../lib/assistant/parser.ts';
import { confirmPrompt, deniedText, helpText, missingText, notFoundText, unknownText, unsupportedText } from '../../lib/assistant/texts.ts';
import { AppError, ForbiddenError, NotFoundError, VersionConflictError } from '../../lib/errors.ts';
import { can, personalUserId, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { DashboardService } from '../dashboards/service.ts';
import { backupInput } from '../backups/input.ts';
import { backupBody } from '../backups/schemas.ts';
import { migrateBody, migrationInput } from '../dashboard-migration/input.ts';
import { dashboardsOfDatasets, llmDocsInput } from '../datasets/input.ts';
import { generateDocsBody } from '../datasets/schemas.ts';
import { gitDeployInput } from '../git/input.ts';
import { deployBody } from '../git/schemas.ts';
import { hidesQueryRows } from '../tasks/query-rows.ts';
import { toTaskView } from '../tasks/schemas.ts';
import type { BoundReviewSession, ReviewSessionBinder } from './binder.ts';
import { planAnswer, planApproveMappings, planSetField, showSession } from './review.ts';
import {
  checkRefs,
  Clarification,
  resolveDashboards,
  resolveDatasets,
  resolveEnvironment,
  type DashboardRef,
  type EnvRef,
} from './resolve.ts';
import type { AnswerState } from './schemas.ts';

const UPDATE_TIMEOUT_MS = 5_000;
const LIST_SIZE = 25;
const LOG_LINES = 50;
/** How long a command that asked for a missing part waits for the reply that completes it. */
const FOLLOW_UP_SECONDS = 10 * 60;

/**
 * A task request as the direct route would receive it, parsed by the route's own schema (same
 * defaults, same limits); what the schema refuses becomes a question, not a 500.
 */
function requestBody<S extends z.ZodType>(lang: Language, schema: S, body: z.input<S>): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const why = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new Clarification(lang === 'ru' ? `Такой запрос не принимается: ${why}.` : `That request is not accepted: ${why}.`, {
    invalid: 'request',
    errors: r.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message })),
  });
}

export interface Answer {
  conversation_id: string;
  message_id: string;
  state: AnswerState;
  intent: Intent;
  text: string;
  confirmation?: { id: string; expires_at: string; summary: string };
  task_id?: string;
  data?: unknown;
}

interface Reply {
  state: AnswerState;
  text: string;
  data?: unknown;
  confirmation?: Answer['confirmation'];
  taskId?: string;
  /** Keep the command for a follow-up message that completes it. */
  incomplete?: boolean;
}

function requirement(intent: Intent): { permission: TaskKind<never>['permission'] | null; kind?: TaskKindName } {
  const key = `${intent.domain}.${intent.operation}`;
  switch (key) {
    case 'dashboards.list':
    case 'dashboards.search':
      return { permission: 'dashboards:READ' };
    case 'datasets.list':
    case 'datasets.search':
      return { permission: 'datasets:READ' };
    case 'dashboards.migrate':
      return { permission: TASK_KINDS.migration.permission, kind: 'migration' };
    case 'dashboards.backup':
      return { permission: TASK_KINDS.backup.permission, kind: 'backup' };
    case 'datasets.generate_docs':
      return { permission: TASK_KINDS.llm_docs.permission, kind: 'llm_docs' };
    case 'git.deploy':
      return { permission: TASK_KINDS.git_deploy.permission, kind: 'git_deploy' };
    case 'git.status':
      return { permission: 'git:READ' };
    case 'git.commit':
      return { permission: 'git:WRITE' };
    case 'dataset_review.show':
      return { permission: 'dataset_review:READ' };
    case 'dataset_review.set_field':
    case 'dataset_review.approve_mappings':
    case 'dataset_review.answer':
      return { permission: 'dataset_review:WRITE' };
    default:
      return { permission: null };
  }
}

const plural = (lang: Language, n: number, ru: [string, string, string], en: string) => {
  if (lang === 'en') return `${n} ${en}${n === 1 ? '' : 's'}`;
  const mod10 = n % 10;
  const mod100 = n % 100;
  const form = mod10 === 1 && mod100 !== 11 ? ru[0] : mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14) ? ru[1] : ru[2];
  return `${n} ${form}`;
};
const DASHBOARDS: [string, string, string] = ['дашборд', 'дашборда', 'дашбордов'];
/** Genitive ("копию 1 дашборда", "копию 3 дашбордов"). */
const DASHBOARDS_OF: [string, string, string] = ['дашборда', 'дашбордов', 'дашбордов'];
const DATASETS_OF: [string, string, string] = ['датасета', 'датасетов', 'датасетов'];
const DATASETS: [string, string, string] = ['датасет', 'датасета', 'датасетов'];
const q = (lang: Language, s: string) => (lang === 'ru' ? `«${s}»` : `"${s}"`);
const dashList = (lang: Language, ds: DashboardRef[]) => ds.map((d) => `#${d.id} ${q(lang, d.title)}`).join(', ');

export class AssistantService {
  private readonly app: AppContext;
  private readonly conversations: ConversationStore;
  private readonly confirmations: ConfirmationStore;
  private readonly audit: AuditStore;
  private readonly providers: LlmProviderStore;
  private readonly dashboards: DashboardService;
  private readonly binder?: ReviewSessionBinder;

  constructor(app: AppContext, binder?: ReviewSessionBinder) {
    this.app = app;
    this.conversations = app.stores.assistant.conversations;
    this.confirmations = app.stores.assistant.confirmations;
    this.audit = app.stores.assistant.audit;
    this.providers = app.stores.llmProviders;
    this.dashboards = app.dashboards;
    this.binder = binder;
  }

  private userOf(principal: Principal): string {
    if (!personalUserId(principal)) throw new ForbiddenError('The assistant answers people signed in, not API keys');
    return principal.userId;
  }

  private async environments(): Promise<EnvRef[]> {
    const { rows } = await this.app.stores.environments.list(1, 1000);
    return rows.map((r) => ({ id: r.id, name: r.name }));
  }

  // ---- messages ---------------------------------------------------------------------------

  async message(
    principal: Principal,
    body: { text: string; conversation_id?: string; dataset_review_session_id?: string },
  ): Promise<Answer> {
    const userId = this.userOf(principal);
    let session: BoundReviewSession | undefined;
    if (body.dataset_review_session_id) {
      session = this.binder ? await this.binder.load(body.dataset_review_session_id, principal) : undefined;
      if (!session) throw new NotFoundError('Dataset review session', body.dataset_review_session_id);
    }
    if (body.conversation_id) {
      const existing = await this.conversations.get(body.conversation_id);
      if (existing && existing.user_id !== userId) throw new NotFoundError('Conversation', body.conversation_id);
    }
    const envs = await this.environments();
    let text = body.text;
    let parsed = parseCommand(text, { environments: envs });
    // A reply to a question ("из dev в prod") completes the command that asked it.
    const pending = body.conversation_id ? await this.conversations.pendingCommand(body.conversation_id, FOLLOW_UP_SECONDS) : undefined;
    if (pending && (parsed.intent.operation === 'unknown' || parsed.intent.domain === 'help')) {
      const combined = parseCommand(`${pending} ${text}`, { environments: envs });
      if (combined.intent.operation !== 'unknown') {
        parsed = combined;
        text = `${pending} ${text}`;
      }
    }
    if (parsed.intent.operation === 'unsupported') {
      // Refused before anything is stored: bad input changes nothing.
      throw new AppError(
        400,
        'unsupported_operation',
        'Unsupported operation',
        unsupportedText(parsed.language, parsed.intent.entities.verb ?? ''),
        {
          extra: { intent: parsed.intent },
        },
      );
    }
    const conv = await this.conversations.open(body.conversation_id, userId, body.text);
    if (!conv) throw new NotFoundError('Conversation', body.conversation_id);
    const asked = await this.conversations.addMessage({ conversationId: conv.id, userId, role: 'user', text: body.text, intent: parsed.intent });

    let reply: Reply;
    try {
      reply = await this.decide(principal, parsed, conv.id, envs, session);
    } catch (err) {
      // Not answered (Superset or Temporal down): the command that was waiting still waits.
      if (!(err instanceof Clarification)) throw pending ? await this.conversations.leavePending(asked.id, pending).then(() => err) : err;
      reply = { state: 'needs_clarification', text: err.message, data: err.data, incomplete: true };
    }
    if (session)
      reply.data = {
        ...((reply.data as object | undefined) ?? {}),
        dataset_review_session: { id: session.id, version: session.version, ...session.metadata },
      };
    // The next message, on whichever API process, completes what this one still lacks.
    if (reply.incomplete) await this.conversations.leavePending(asked.id, text);

    const msg = await this.conversations.addMessage({
      conversationId: conv.id,
      userId,
      role: 'assistant',
      text: reply.text,
      state: reply.state,
      intent: parsed.intent,
      data: reply.data,
      confirmationId: reply.confirmation?.id ?? null,
      taskId: reply.taskId ?? null,
    });
    return {
      conversation_id: conv.id,
      message_id: msg.id,
      state: reply.state,
      intent: parsed.intent,
      text: reply.text,
      ...(reply.confirmation ? { confirmation: reply.confirmation } : {}),
      ...(reply.taskId ? { task_id: reply.taskId } : {}),
      ...(reply.data !== undefined ? { data: reply.data } : {}),
    };
  }

  private async record(
    principal: Principal,
    decision: AuditDecision,
    intent: Intent,
    outcome: Record<string, unknown>,
    extra: { conversationId?: string | null; confirmationId?: string; taskId?: string } = {},
  ) {
    await this.audit.record({
      userId: principal.userId,
      username: principal.username,
      decision,
      intent: intent as unknown as Intent & Record<string, unknown>,
      outcome,
      conversationId: extra.conversationId ?? null,
      confirmationId: extra.confirmationId ?? null,
      taskId: extra.taskId ?? null,
    });
  }

  private async decide(
    principal: Principal,
    parsed: ParseResult,
    conversationId: string,
    envs: EnvRef[],
    session?: BoundReviewSession,
  ): Promise<Reply> {
    const { intent, language: lang, missing } = parsed;
    const e = intent.entities;
    if (intent.operation === 'unknown') return { state: 'needs_clarification', text: unknownText(lang), data: { intent: 'unknown' } };
    if (intent.domain === 'help') return { state: 'answered', text: helpText(lang, this.app.config.ASSISTANT_CONFIRMATION_TTL_SECONDS) };

    const need = requirement(intent);
    const allowed = need.kind ? this.app.tasks.mayStart(need.kind, principal) : need.permission === null || (need.permission !== 'admin' && can(principal, need.permission));
    if (!allowed) {
      await this.record(principal, 'denied', intent, { permission: need.permission, reason: 'missing_permission' }, { conversationId });
      return { state: 'denied', text: deniedText(lang, need.permission!), data: { permission: need.permission } };
    }
    if (missing.length) return { state: 'needs_clarification', text: missingText(lang, missing), data: { missing }, incomplete: true };

    const env = (m: string | undefined) => resolveEnvironment(lang, m!, envs);
    if (e.query) checkRefs(lang, [e.query]);
    const executed = async (text: string, data: unknown, outcome: Record<string, unknown>): Promise<Reply> => {
      await this.record(principal, 'executed', intent, outcome, { conversationId });
      return { state: 'executed', text, data };
    };
    /** A list in an environment: the count (with the query, if any), then the first ten lines. */
    const listAnswer = (
      where: { id: string; name: string },
      total: number,
      counted: string,
      items: unknown[],
      lines: string[],
    ): Promise<Reply> => {
      const matching = e.query ? (lang === 'ru' ? ` по запросу ${q(lang, e.query)}` : ` matching ${q(lang, e.query)}`) : '';
      const text = [`${where.name}: ${counted}${matching}${lines.length ? ':' : '.'}`, ...lines.slice(0, 10)].join('\n');
      return executed(text, { env_id: where.id, total, items, entities: { ...e, environment: where } }, { env_id: where.id, total });
    };

    if (intent.domain === 'dataset_review') {
      if (!session) {
        return {
          state: 'needs_clarification',
          text:
            lang === 'ru'
              ? 'Эта команда работает с сессией проверки датасета: отправьте сообщение с dataset_review_session_id.'
              : 'This works on a dataset review session: send the message with dataset_review_session_id.',
          data: { missing: ['dataset_review_session_id'] },
        };
      }
      const plan =
        intent.operation === 'set_field'
          ? planSetField(lang, session, e)
          : intent.operation === 'approve_mappings'
            ? planApproveMappings(lang, session)
            : intent.operation === 'answer'
              ? planAnswer(lang, session, e)
              : showSession(lang, session);
      if (plan.kind === 'show') return executed(plan.text, plan.data, { session_id: session.id, session_version: session.version });
      return this.askToConfirm(principal, parsed, conversationId, plan.summary, plan.action, { ...e, ...plan.resolved });
    }

    switch (`${intent.domain}.${intent.operation}`) {
      case 'dashboards.list':
      case 'dashboards.search': {
        const where = env(e.environment);
        const page = await this.dashboards.list({
          envId: where.id,
          page: 1,
          pageSize: LIST_SIZE,
          search: e.query,
          overrideShowAll: false,
          pageContext: e.query ? 'other' : 'dashboards_main',
          principal,
        });
        const items = page.items.map((d) => ({ id: d.id, title: d.title, slug: d.slug, url: d.url }));
        const lines = items.map((d) => `#${d.id} ${d.title}${d.slug ? ` (${d.slug})` : ''}`);
        return listAnswer(where, page.total, plural(lang, page.total, DASHBOARDS, 'dashboard'), items, lines);
      }
      case 'datasets.list':
      case 'datasets.search': {
        const where = env(e.environment);
        const res = await this.app.supersets.use(where.id, (client) =>
          client.listDatasets({ filters: e.query ? [{ col: 'table_name', opr: 'ct', value: e.query }] : [], page: 0, pageSize: LIST_SIZE }),
        );
        const items = res.result.map((d) => ({
          id: d.id,
          table_name: d.table_name,
          schema: d.schema ?? null,
          database: d.database?.database_name ?? null,
        }));
        const lines = items.map((d) => `#${d.id} ${d.table_name}`);
        return listAnswer(where, res.count, plural(lang, res.count, DATASETS, 'dataset'), items, lines);
      }
      case 'tasks.status':
      case 'tasks.logs': {
        const task = await this.findTask(principal, lang, e.task_id, e.latest === true);
        if (intent.operation === 'status') {
          const view = toTaskView(task, this.app.tasks.temporalUiUrl(task.id));
          const text = `${lang === 'ru' ? 'Задача' : 'Task'} ${task.id}${task.summary ? ` (${task.summary})` : ''}: ${task.status}${
            task.progress && typeof task.progress === 'object' && 'message' in task.progress
              ? ` — ${String((task.progress as { message?: unknown }).message)}`
              : ''
          }`;
          return executed(text, { task: view }, { task_id: task.id, status: task.status });
        }
        const logs = await this.app.taskLogs.read(task.id, { limit: LOG_LINES, conceal: hidesQueryRows(task, principal) });
        const lines = logs.items
          .slice(-10)
          .map((l) =>
            `${String((l as { ts?: unknown }).ts ?? '')} ${(l as { level?: string }).level ?? ''} ${(l as { message?: string }).message ?? ''}`.trim(),
          );
        const text = [`${lang === 'ru' ? 'Логи задачи' : 'Logs of task'} ${task.id} (${task.status}):`, ...lines].join('\n');
        return executed(
          text,
          { task_id: task.id, items: logs.items, has_more: logs.has_more },
          { task_id: task.id, lines: logs.items.length },
        );
      }
      case 'git.status': {
        const where = env(e.environment);
        const ds = await resolveDashboards(lang, this.app.supersets, where.id, e.dashboards!);
        const statuses = [];
        for (const d of ds) statuses.push({ ...(await this.app.git.status(where.id, d.id)), dashboard_id: d.id, title: d.title });
        const text = statuses.map((s) => `#${s.dashboard_id} ${s.title}: ${(s as { status?: string }).status ?? ''}`).join('\n');
        return executed(
          text,
          { env_id: where.id, items: statuses, entities: { ...e, environment: where, dashboards: ds } },
          { env_id: where.id, dashboards: ds.map((d) => d.id) },
        );
      }
      case 'dashboards.migrate': {
        const source = env(e.source_environment);
        const target = env(e.target_environment);
        if (source.id === target.id) {
          throw new Clarification(
            lang === 'ru'
              ? 'Исходное и целевое окружения совпадают: укажите разные («из dev в prod»).'
              : 'The source and target environments are the same: name two ("from dev to prod").',
            { invalid: 'target_environment' },
          );
        }
        const ds = await resolveDashboards(lang, this.app.supersets, source.id, e.dashboards!);
        const { input, params } = migrationInput(
          requestBody(lang, migrateBody, {
            source_env_id: source.id,
            target_env_id: target.id,
            dashboard_ids: ds.map((d) => d.id),
            db_mappings: e.db_mappings ?? [],
            dry_run: e.dry_run === true,
          }),
        );
        const resolved = { ...e, source_environment: source, target_environment: target, dashboards: ds };
        const dbs = input.dbMappings.length
          ? lang === 'ru'
            ? ` Базы данных: ${input.dbMappings.map((m) => `#${m.source_database_id} → #${m.target_database_id}`).join(', ')} (вместо сохранённых сопоставлений).`
            : ` Databases: ${input.dbMappings.map((m) => `#${m.source_database_id} → #${m.target_database_id}`).join(', ')} (over the saved mappings).`
          : '';
        if (input.dryRun) {
          // Changes nothing: runs at once, as the direct route would.
          const { task } = await this.app.tasks.create({ kind: 'migration', input, params, owner: principal });
          await this.record(principal, 'executed', intent, { task_id: task.id }, { conversationId, taskId: task.id });
          const text =
            lang === 'ru'
              ? `Запущен пробный перенос ${plural(lang, ds.length, DASHBOARDS, 'dashboard')} (${dashList(lang, ds)}) из ${source.name} в ${target.name}: ничего не меняется.${dbs} Задача ${task.id}.`
              : `Started a dry run migrating ${plural(lang, ds.length, DASHBOARDS, 'dashboard')} (${dashList(lang, ds)}) from ${source.name} to ${target.name}: nothing changes.${dbs} Task ${task.id}.`;
          return { state: 'executed', text, taskId: task.id, data: { entities: resolved } };
        }
        const summary =
          lang === 'ru'
            ? `Перенести ${plural(lang, ds.length, DASHBOARDS, 'dashboard')} (${dashList(lang, ds)}) из ${source.name} в ${target.name}, перезаписав существующие в ${target.name}.${dbs}`
            : `Migrate ${plural(lang, ds.length, DASHBOARDS, 'dashboard')} (${dashList(lang, ds)}) from ${source.name} to ${target.name}, overwriting those already in ${target.name}.${dbs}`;
        return this.askToConfirm(principal, parsed, conversationId, summary, { type: 'task', kind: 'migration', input, params }, resolved);
      }
      case 'dashboards.backup': {
        const where = env(e.environment);
        const ds = await resolveDashboards(lang, this.app.supersets, where.id, e.dashboards!);
        const { input, params } = backupInput(requestBody(lang, backupBody, { env_id: where.id, dashboard_ids: ds.map((d) => d.id) }));
        const summary =
          lang === 'ru'
            ? `Сделать резервную копию ${plural(lang, ds.length, DASHBOARDS_OF, 'dashboard')} (${dashList(lang, ds)}) окружения ${where.name} в хранилище бэкапов.`
            : `Back up ${plural(lang, ds.length, DASHBOARDS, 'dashboard')} (${dashList(lang, ds)}) of ${where.name} into the backup store.`;
        return this.askToConfirm(
          principal,
          parsed,
          conversationId,
          summary,
          { type: 'task', kind: 'backup', input, params },
          { ...e, environment: where, dashboards: ds },
        );
      }
      case 'datasets.generate_docs': {
        const where = env(e.environment);
        const sets = await resolveDatasets(lang, this.app.supersets, where.id, e.datasets!);
        const provider = await this.llmProvider();
        if (!provider) {
          return {
            state: 'answered',
            text:
              lang === 'ru'
                ? 'Не настроен ни один LLM-провайдер: попросите администратора добавить его.'
                : 'No LLM provider is configured: ask an administrator to add one.',
          };
        }
        const language = e.language ?? lang;
        const body = requestBody(lang, generateDocsBody, {
          env_id: where.id,
          dataset_ids: sets.map((s) => s.id),
          llm_provider: provider.id,
          language,
        });
        const { input, params } = llmDocsInput(
          body,
          await dashboardsOfDatasets(this.app.supersets, this.app.logger, where.id, body.dataset_ids),
        );
        const names = sets.map((s) => `#${s.id} ${s.table_name}`).join(', ');
        const summary =
          lang === 'ru'
            ? `Сгенерировать описания (${language === 'ru' ? 'на русском' : 'на английском'}) для ${plural(lang, sets.length, DATASETS_OF, 'dataset')} (${names}) окружения ${where.name} через LLM-провайдер ${provider.name}. Предложения ждут проверки; в Superset ничего не пишется.`
            : `Generate descriptions (${language === 'ru' ? 'in Russian' : 'in English'}) for ${plural(lang, sets.length, DATASETS, 'dataset')} (${names}) of ${where.name} with the LLM provider ${provider.name}. The suggestions wait for review; nothing is written to Superset.`;
        return this.askToConfirm(
          principal,
          parsed,
          conversationId,
          summary,
          {
            type: 'task',
            kind: 'llm_docs',
            input,
            params,
          },
          { ...e, environment: where, datasets: sets },
        );
      }
      case 'git.commit': {
        const where = env(e.environment);
        const d = await this.oneDashboard(lang, where, e.dashboards!);
        const summary =
          lang === 'ru'
            ? `Закоммитить рабочую копию дашборда #${d.id} ${q(lang, d.title)} (${where.name}) с сообщением ${q(lang, e.message!)}.`
            : `Commit the working copy of dashboard #${d.id} ${q(lang, d.title)} (${where.name}) with the message ${q(lang, e.message!)}.`;
        return this.askToConfirm(
          principal,
          parsed,
          conversationId,
          summary,
          { type: 'git_commit', envId: where.id, dashboardId: d.id, message: e.message! },
          {
            ...e,
            environment: where,
            dashboards: [d],
          },
        );
      }
      case 'git.deploy': {
        const where = env(e.environment);
        const target = env(e.target_environment);
        const d = await this.oneDashboard(lang, where, e.dashboards!);
        const commit = e.commit ?? 'HEAD';
        let prepared;
        try {
          prepared = await this.app.git.prepareDeploy(where.id, d.id, target.id, commit);
        } catch (err) {
          if (err instanceof AppError && (err.status === 404 || err.status === 400))
            throw new Clarification(err.message, { error: err.code });
          throw err;
        }
        const { input, params } = gitDeployInput(
          requestBody(lang, deployBody, { env_id: where.id, target_env_id: target.id, commit }),
          d.id,
          prepared,
          principal.userId,
        );
        const summary =
          lang === 'ru'
            ? `Развернуть дашборд #${d.id} ${q(lang, d.title)} из репозитория (коммит ${prepared.commit.slice(0, 10)}) в ${target.name}${prepared.protected ? '; окружение защищено, понадобится одобрение второго человека' : ''}.`
            : `Deploy dashboard #${d.id} ${q(lang, d.title)} from its repository (commit ${prepared.commit.slice(0, 10)}) into ${target.name}${prepared.protected ? '; the environment is protected, a second person must approve' : ''}.`;
        return this.askToConfirm(
          principal,
          parsed,
          conversationId,
          summary,
          {
            type: 'task',
            kind: 'git_deploy',
            input,
            params,
          },
          { ...e, environment: where, target_environment: target, dashboards: [d], commit: prepared.commit },
        );
      }
      default:
        return { state: 'needs_clarification', text: unknownText(lang), data: { intent: 'unknown' } };
    }
  }

  private async oneDashboard(lang: Language, where: EnvRef, refs: Array<number | string>): Promise<DashboardRef> {
    const ds = await resolveDashboards(lang, this.app.supersets, where.id, refs);
    if (ds.length !== 1) {
      throw new Clarification(
        lang === 'ru'
          ? `Эта операция работает с одним дашбордом; выберите один: ${dashList(lang, ds)}.`
          : `This works on one dashboard; pick one: ${dashList(lang, ds)}.`,
        { ambiguous: 'dashboard', candidates: ds },
      );
    }
    return ds[0]!;
  }

  private async llmProvider(): Promise<{ id: string; name: string } | undefined> {
    const d = await this.providers.exists(DEFAULT_PROVIDER_ID, this.app.config);
    if (d) return { id: DEFAULT_PROVIDER_ID, name: d.name };
    const { rows } = await this.providers.list(1, 1);
    return rows[0] ? { id: rows[0].id, name: rows[0].name } : undefined;
  }

  private async findTask(principal: Principal, lang: Language, id: string | undefined, latest: boolean) {
    if (latest && !id) {
      const page = await this.app.tasks.list({ owner: principal.userId ?? principal.username }, 1, 1, principal);
      const task = page.items[0];
      if (!task) throw new Clarification(lang === 'ru' ? 'У вас пока нет задач.' : 'You have no tasks yet.', { not_found: 'task' });
      return task;
    }
    try {
      return await this.app.tasks.getVisible(id!, principal);
    } catch (err) {
      if (err instanceof NotFoundError) throw new Clarification(notFoundText(lang, 'task', id!), { not_found: 'task', mention: id });
      throw err;
    }
  }

  // ---- confirmations ----------------------------------------------------------------------

  private async askToConfirm(
    principal: Principal,
    parsed: ParseResult,
    conversationId: string,
    summary: string,
    action: PlannedAction,
    resolved: Record<string, unknown>,
  ): Promise<Reply> {
    const id = randomUUID();
    const ttl = this.app.config.ASSISTANT_CONFIRMATION_TTL_SECONDS;
    const expiresAt = new Date(Date.now() + ttl * 1000);
    await this.confirmations.create({
      id,
      user_id: principal.userId!,
      username: principal.username,
      conversation_id: conversationId,
      intent: { ...parsed.intent, language: parsed.language },
      summary,
      action,
      expires_at: expiresAt,
    });
    const input: AssistantConfirmationInput = { confirmationId: id, expiresAt: expiresAt.toISOString() };
    try {
      await this.app.temporal.workflow.start(ASSISTANT_CONFIRMATION_WORKFLOW, {
        workflowId: confirmationWorkflowId(id),
        taskQueue: this.app.config.TEMPORAL_TASK_QUEUE,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: `Assistant confirmation for ${principal.username}: ${summary}`.slice(0, 400),
      });
    } catch (err) {
      // The row still decides (its expiry is checked on every confirm); only the timer is missing.
      this.app.logger.warn({ err, confirmation_id: id }, 'assistant confirmation workflow did not start');
    }
    const minutes = Math.max(1, Math.round(ttl / 60));
    return {
      state: 'awaiting_confirmation',
      text: confirmPrompt(parsed.language, summary, minutes).replace('{id}', id),
      confirmation: { id, expires_at: expiresAt.toISOString(), summary },
      data: { entities: resolved },
    };
  }

  /** The confirmation workflow's answer to an update, or undefined when it has ended or cannot be reached. */
  private async updateWorkflow(id: string, update: string): Promise<ConfirmationState | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const handle = this.app.temporal.workflow.getHandle(confirmationWorkflowId(id));
      return await Promise.race([
        handle.executeUpdate<ConfirmationState, []>(update),
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), UPDATE_TIMEOUT_MS))),
      ]);
    } catch (err) {
      this.app.logger.debug({ err, confirmation_id: id }, 'confirmation workflow did not take the update; the row decides');
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private expiredError(row: ConfirmationRow) {
    return new AppError(
      400,
      'confirmation_expired',
      'Confirmation expired',
      `Confirmation ${row.id} expired at ${new Date(row.expires_at).toISOString()}; nothing was started. Send the command again.`,
    );
  }

  private cancelledError(row: ConfirmationRow) {
    return new AppError(
      400,
      'confirmation_cancelled',
      'Confirmation cancelled',
      `Confirmation ${row.id} was cancelled; nothing was started.`,
    );
  }

  private async owned(principal: Principal, id: string, verb: 'confirm' | 'cancel'): Promise<ConfirmationRow> {
    const row = await this.confirmations.get(id);
    if (!row) throw new NotFoundError('Confirmation', id);
    if (row.user_id !== principal.userId) {
      await this.record(principal, 'denied', row.intent as unknown as Intent, { reason: 'not_owner', verb }, { confirmationId: id });
      throw new ForbiddenError(`Only the user who asked may ${verb} this confirmation`);
    }
    return row;
  }

  async confirm(principal: Principal, id: string) {
    this.userOf(principal);
    let row = await this.owned(principal, id, 'confirm');
    if (row.status === 'confirmed') return this.carryOut(principal, row);
    if (row.status === 'cancelled') throw this.cancelledError(row);
    if (row.status === 'expired' || new Date(row.expires_at).getTime() <= Date.now()) {
      await this.confirmations.expire(id);
      throw this.expiredError(row);
    }
    // The caller's permissions now, not when they asked.
    const need = requirement(row.intent as unknown as Intent);
    const allowed = need.kind ? this.app.tasks.mayStart(need.kind, principal) : need.permission === null || (need.permission !== 'admin' && can(principal, need.permission));
    if (!allowed) {
      await this.record(
        principal,
        'denied',
        row.intent as unknown as Intent,
        { reason: 'missing_permission', permission: need.permission },
        { confirmationId: id },
      );
      throw new ForbiddenError(`Confirming needs the permission ${need.permission}`);
    }
    // A review write planned at a version the session has left changes nothing, and says so now.
    if (row.action.type === 'dataset_review') await this.currentReviewVersion(principal, row.action);
    const state = await this.updateWorkflow(id, CONFIRM_UPDATE);
    if (state === 'expired') {
      await this.confirmations.expire(id);
      throw this.expiredError(row);
    }
    if (state === 'cancelled') throw this.cancelledError(row);
    const decided = await this.confirmations.decide(id, 'confirmed');
    if (!decided) {
      row = (await this.confirmations.get(id))!;
      if (row.status === 'confirmed') return this.carryOut(principal, row);
      if (row.status === 'cancelled') throw this.cancelledError(row);
      await this.confirmations.expire(id);
      throw this.expiredError(row);
    }
    return this.carryOut(principal, decided);
  }

  /** Starts what was confirmed, once: the task under the confirmation's idempotency key, or the git commit. */
  private async carryOut(principal: Principal, row: ConfirmationRow) {
    const intent = row.intent as unknown as Intent & { language?: Language };
    const lang: Language = intent.language === 'en' ? 'en' : 'ru';
    const action = row.action;
    let taskId: string | null = row.task_id;
    let result: unknown = row.result ?? undefined;
    let first = false;
    if (action.type === 'task') {
      if (!taskId) {
        const { task } = await this.app.tasks.create({
          kind: action.kind as TaskKindName,
          input: action.input as never,
          params: action.params,
          owner: principal,
          idempotencyKey: `assistant-confirmation:${row.id}`,
        });
        taskId = task.id;
        first = await this.confirmations.recordOutcome(row.id, { taskId });
      }
    } else if (action.type === 'dataset_review') {
      const stale = result as { error?: string; current_version?: number } | undefined;
      if (stale?.error === 'version_conflict')
        throw new VersionConflictError(
          `Dataset review session ${action.sessionId}`,
          action.version,
          stale.current_version ?? action.version,
        );
      if (result === undefined) {
        try {
          result = { session_id: action.sessionId, op: action.op, ...(await this.reviewWrite(principal, action)) };
        } catch (err) {
          if (err instanceof VersionConflictError) {
            await this.confirmations.recordOutcome(row.id, {
              result: { error: 'version_conflict', current_version: err.extra?.current_version },
            });
          }
          throw err;
        }
        first = await this.confirmations.recordOutcome(row.id, { result });
      }
    } else if (result === undefined) {
      result = await this.app.git.commit(principal, action.envId, action.dashboardId, action.message);
      first = await this.confirmations.recordOutcome(row.id, { result });
    }
    const reviewVersion = action.type === 'dataset_review' ? (result as { version?: number } | undefined)?.version : undefined;
    const text =
      action.type === 'task'
        ? lang === 'ru'
          ? `Подтверждено: ${row.summary} Задача ${taskId}.`
          : `Confirmed: ${row.summary} Task ${taskId}.`
        : reviewVersion !== undefined
          ? lang === 'ru'
            ? `Подтверждено: ${row.summary} Версия сессии теперь ${reviewVersion}.`
            : `Confirmed: ${row.summary} The session is now at version ${reviewVersion}.`
          : lang === 'ru'
            ? `Подтверждено: ${row.summary}`
            : `Confirmed: ${row.summary}`;
    if (first) {
      await this.record(
        principal,
        'confirmed',
        intent,
        { summary: row.summary, ...(taskId ? { task_id: taskId } : { result }) },
        {
          conversationId: row.conversation_id,
          confirmationId: row.id,
          taskId: taskId ?? undefined,
        },
      );
      if (row.conversation_id) {
        const conv = await this.conversations.get(row.conversation_id);
        if (conv) {
          await this.conversations.addMessage({
            conversationId: conv.id,
            userId: conv.user_id,
            role: 'assistant',
            text,
            state: 'executed',
            intent,
            data: result === undefined ? null : { result },
            confirmationId: row.id,
            taskId,
          });
        }
      }
    }
    return {
      confirmation_id: row.id,
      status: 'confirmed' as const,
      task_id: taskId,
      text,
      ...(result !== undefined ? { data: result } : {}),
    };
  }

  private reviewBinder(): ReviewSessionBinder {
    if (!this.binder) throw new NotFoundError('Dataset review session', '');
    return this.binder;
  }

  /** The bound session still at the version the confirmation carries (404 when it is gone or not the caller's, 409 when it moved). */
  private async currentReviewVersion(principal: Principal, action: Extract<PlannedAction, { type: 'dataset_review' }>) {
    const s = await this.reviewBinder().load(action.sessionId, principal);
    if (!s) throw new NotFoundError('Dataset review session', action.sessionId);
    if (s.version !== action.version)
      throw new VersionConflictError(`Dataset review session ${action.sessionId}`, action.version, s.version);
  }

  private async reviewWrite(
    principal: Principal,
    action: Extract<PlannedAction, { type: 'dataset_review' }>,
  ): Promise<{ version: number }> {
    const binder = this.reviewBinder();
    switch (action.op) {
      case 'set_field':
        return binder.setField(principal, action.sessionId, action.version, action.fieldId!, { label: action.label! });
      case 'approve_mappings':
        return binder.approveMappings(principal, action.sessionId, action.version);
      case 'answer':
        return binder.answer(principal, action.sessionId, action.version, action.questionKey!, {
          option: action.option!,
          ...(action.label !== undefined ? { label: action.label } : {}),
        });
    }
  }

  async cancel(principal: Principal, id: string): Promise<{ confirmation_id: string; status: 'cancelled'; task_id: null; text: string }> {
    this.userOf(principal);
    const row = await this.owned(principal, id, 'cancel');
    const intent = row.intent as unknown as Intent & { language?: Language };
    const text =
      intent.language === 'en' ? `Cancelled: ${row.summary} Nothing was started.` : `Отменено: ${row.summary} Ничего не запущено.`;
    if (row.status === 'cancelled') return { confirmation_id: id, status: 'cancelled' as const, task_id: null, text };
    if (row.status === 'confirmed')
      throw new AppError(
        409,
        'confirmation_decided',
        'Conflict',
        `Confirmation ${id} was already confirmed${row.task_id ? ` (task ${row.task_id})` : ''}`,
      );
    if (row.status === 'expired' || new Date(row.expires_at).getTime() <= Date.now()) {
      await this.confirmations.expire(id);
      throw this.expiredError(row);
    }
    await this.updateWorkflow(id, CANCEL_UPDATE);
    const decided = await this.confirmations.decide(id, 'cancelled', {
      userId: principal.userId,
      username: principal.username,
      intent: intent as never,
      outcome: { summary: row.summary },
      conversationId: row.conversation_id,
      confirmationId: id,
    });
    if (!decided) return this.cancel(principal, id);
    if (row.conversation_id && (await this.conversations.get(row.conversation_id))) {
      await this.conversations.addMessage({
        conversationId: row.conversation_id,
        userId: row.user_id,
        role: 'assistant',
        text,
        state: 'answered',
        intent,
        confirmationId: id,
      });
    }
    return { confirmation_id: id, status: 'cancelled' as const, task_id: null, text };
  }

  // ---- conversations and audit ------------------------------------------------------------

  async listConversations(principal: Principal, page: number, pageSize: number, archived?: boolean) {
    const { rows, total } = await this.conversations.list(this.userOf(principal), page, pageSize, archived);
    return {
      items: rows.map((r) => ({
        conversation_id: r.id,
        title: r.title,
        archived: r.archived,
        last_message_preview: r.last_message_preview,
        message_count: Number(r.message_count),
        created_at: new Date(r.created_at).toISOString(),
        last_activity_at: new Date(r.last_activity_at).toISOString(),
      })),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }

  private async ownConversation(principal: Principal, id: string) {
    const conv = await this.conversations.get(id);
    // Someone else's conversation answers like an absent one.
    if (!conv || conv.user_id !== this.userOf(principal)) throw new NotFoundError('Conversation', id);
    return conv;
  }

  async history(principal: Principal, id: string, page: number, pageSize: number) {
    const conv = await this.ownConversation(principal, id);
    const { rows, total } = await this.conversations.messages(id, page, pageSize);
    return {
      conversation_id: id,
      archived: conv.archived,
      items: rows.map((m) => ({
        message_id: m.id,
        role: m.role,
        text: m.text,
        state: m.state,
        intent: m.intent,
        data: m.data ?? null,
        confirmation_id: m.confirmation_id,
        task_id: m.task_id,
        created_at: new Date(m.created_at).toISOString(),
      })),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }

  async deleteConversation(principal: Principal, id: string, hard: boolean) {
    await this.ownConversation(principal, id);
    if (hard) await this.conversations.remove(id);
    else await this.conversations.archive(id);
    return { conversation_id: id, deleted: hard ? ('hard' as const) : ('archived' as const) };
  }

  async auditLog(principal: Principal, page: number, pageSize: number, decision?: AuditDecision) {
    const { rows, total } = await this.audit.list(this.userOf(principal), page, pageSize, decision);
    return {
      items: rows.map((r) => ({
        id: r.id,
        decision: r.decision,
        domain: r.domain,
        operation: r.operation,
        intent: r.intent,
        outcome: r.outcome,
        conversation_id: r.conversation_id,
        confirmation_id: r.confirmation_id,
        task_id: r.task_id,
        created_at: new Date(r.created_at).toISOString(),
      })),
      total,
      page,
      page_size: pageSize,
      has_next: page * pageSize < total,
    };
  }
}
