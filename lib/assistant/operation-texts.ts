/**
 * What the assistant says about its operations, Russian and English side by side by key: the
 * answers of the read-only ones, the summaries a confirmation shows, and what confirming or
 * cancelling says.
 */
import type { Language } from './intent.ts';
import { count, NOUNS, phrase, quote } from './texts.ts';

interface Dashboard {
  id: number;
  title: string;
}

/** "#12 «Sales», #14 «Ops»". */
export const dashboardList = phrase(
  (ds: readonly Dashboard[]) => ds.map((d) => `#${d.id} ${quote.ru(d.title)}`).join(', '),
  (ds) => ds.map((d) => `#${d.id} ${quote.en(d.title)}`).join(', '),
);

const inLanguage: Record<Language, Record<Language, string>> = {
  ru: { ru: 'на русском', en: 'на английском' },
  en: { ru: 'in Russian', en: 'in English' },
};

/**
 * What a migration started from the assistant does with companions: it takes the API's defaults
 * (contracts/companions.ts, DEFAULT_COMPANION_MODES), so the card says what they mean for a person.
 */
const COMPANION_DEFAULTS: Record<Language, string> = {
  ru: 'Вместе с дашбордом переносятся владельцы, теги, оповещения и отчёты (на паузе), слои аннотаций, шаблоны CSS, сохранённые запросы, сертификация, тема и настройки встраивания; если роли дашборда в целевой среде другие, он не переносится (роли копируются только по явной просьбе в консоли или API).',
  en: 'Owners, tags, alerts and reports (paused), annotation layers, CSS templates, saved queries, certification, the theme and the embedded config travel with it; a dashboard whose roles differ in the target stops (roles are copied only when asked for in the console or the API).',
};

export const OPERATION_TEXTS = {
  // ---- read-only answers
  /** "dev: 3 дашборда по запросу «Sales»:" and the first lines under it. */
  listHeading: phrase(
    (env: string, counted: string, query: string | undefined, more: boolean) =>
      `${env}: ${counted}${query ? ` по запросу ${quote.ru(query)}` : ''}${more ? ':' : '.'}`,
    (env, counted, query, more) => `${env}: ${counted}${query ? ` matching ${quote.en(query)}` : ''}${more ? ':' : '.'}`,
  ),
  taskStatus: phrase(
    (id: string, summary: string | null, status: string, progress: string | undefined) =>
      `Задача ${id}${summary ? ` (${summary})` : ''}: ${status}${progress !== undefined ? ` — ${progress}` : ''}`,
    (id, summary, status, progress) =>
      `Task ${id}${summary ? ` (${summary})` : ''}: ${status}${progress !== undefined ? ` — ${progress}` : ''}`,
  ),
  taskLogs: phrase(
    (id: string, status: string) => `Логи задачи ${id} (${status}):`,
    (id, status) => `Logs of task ${id} (${status}):`,
  ),
  noTasks: phrase(
    () => 'У вас пока нет задач.',
    () => 'You have no tasks yet.',
  ),

  // ---- questions while planning
  sameEnvironments: phrase(
    () => 'Исходное и целевое окружения совпадают: укажите разные («из dev в prod»).',
    () => 'The source and target environments are the same: name two ("from dev to prod").',
  ),
  pickOneDashboard: phrase(
    (ds: readonly Dashboard[]) => `Эта операция работает с одним дашбордом; выберите один: ${dashboardList.ru(ds)}.`,
    (ds) => `This works on one dashboard; pick one: ${dashboardList.en(ds)}.`,
  ),
  noLlmProvider: phrase(
    () => 'Не настроен ни один LLM-провайдер: попросите администратора добавить его.',
    () => 'No LLM provider is configured: ask an administrator to add one.',
  ),

  // ---- summaries: what will happen, to which objects, where
  /** Database pairs named in a migration ("#3 → #7"). */
  databases: phrase(
    (pairs: string) => ` Базы данных: ${pairs} (вместо сохранённых сопоставлений).`,
    (pairs) => ` Databases: ${pairs} (over the saved mappings).`,
  ),
  migrate: phrase(
    (ds: readonly Dashboard[], source: string, target: string, databases: string) =>
      `Перенести ${count.ru(ds.length, NOUNS.dashboard)} (${dashboardList.ru(ds)}) из ${source} в ${target}, перезаписав существующие в ${target}.${databases} ${COMPANION_DEFAULTS.ru}`,
    (ds, source, target, databases) =>
      `Migrate ${count.en(ds.length, NOUNS.dashboard)} (${dashboardList.en(ds)}) from ${source} to ${target}, overwriting those already in ${target}.${databases} ${COMPANION_DEFAULTS.en}`,
  ),
  /** A dry run changes nothing and runs at once, so its summary says it started. */
  dryRun: phrase(
    (ds: readonly Dashboard[], source: string, target: string, databases: string) =>
      `Запущен пробный перенос ${count.ru(ds.length, NOUNS.dashboard)} (${dashboardList.ru(ds)}) из ${source} в ${target}: ничего не меняется.${databases}`,
    (ds, source, target, databases) =>
      `Started a dry run migrating ${count.en(ds.length, NOUNS.dashboard)} (${dashboardList.en(ds)}) from ${source} to ${target}: nothing changes.${databases}`,
  ),
  backup: phrase(
    (ds: readonly Dashboard[], env: string) =>
      `Сделать резервную копию ${count.ru(ds.length, NOUNS.dashboardOf)} (${dashboardList.ru(ds)}) окружения ${env} в хранилище бэкапов.`,
    (ds, env) => `Back up ${count.en(ds.length, NOUNS.dashboard)} (${dashboardList.en(ds)}) of ${env} into the backup store.`,
  ),
  generateDocs: phrase(
    (language: Language, n: number, names: string, env: string, provider: string) =>
      `Сгенерировать описания (${inLanguage.ru[language]}) для ${count.ru(n, NOUNS.datasetOf)} (${names}) окружения ${env} через LLM-провайдер ${provider}. Предложения ждут проверки; в Superset ничего не пишется.`,
    (language, n, names, env, provider) =>
      `Generate descriptions (${inLanguage.en[language]}) for ${count.en(n, NOUNS.dataset)} (${names}) of ${env} with the LLM provider ${provider}. The suggestions wait for review; nothing is written to Superset.`,
  ),
  openPullRequest: phrase(
    (d: Dashboard, branch: string, target: string) =>
      `Открыть пулл-реквест ветки ${quote.ru(branch)} дашборда #${d.id} ${quote.ru(d.title)} (ветка будет отправлена на сервер) с превью в ${target}: сухой прогон развёртывания и проверка чартов.`,
    (d, branch, target) =>
      `Open a pull request from branch ${quote.en(branch)} of dashboard #${d.id} ${quote.en(d.title)} (the branch is pushed) with its preview against ${target}: a dry-run deploy and the charts verified.`,
  ),
  commit: phrase(
    (d: Dashboard, env: string, message: string) =>
      `Закоммитить рабочую копию дашборда #${d.id} ${quote.ru(d.title)} (${env}) с сообщением ${quote.ru(message)}.`,
    (d, env, message) =>
      `Commit the working copy of dashboard #${d.id} ${quote.en(d.title)} (${env}) with the message ${quote.en(message)}.`,
  ),
  deploy: phrase(
    (d: Dashboard, commit: string, target: string, guarded: boolean) =>
      `Развернуть дашборд #${d.id} ${quote.ru(d.title)} из репозитория (коммит ${commit}) в ${target}${guarded ? '; окружение защищено, понадобится одобрение второго человека' : ''}.`,
    (d, commit, target, guarded) =>
      `Deploy dashboard #${d.id} ${quote.en(d.title)} from its repository (commit ${commit}) into ${target}${guarded ? '; the environment is protected, a second person must approve' : ''}.`,
  ),

  // ---- what happened
  /** An action that ran without waiting for confirmation (a dry run). */
  started: phrase(
    (summary: string, taskId: string) => `${summary} Задача ${taskId}.`,
    (summary, taskId) => `${summary} Task ${taskId}.`,
  ),
  confirmedTask: phrase(
    (summary: string, taskId: string) => `Подтверждено: ${summary} Задача ${taskId}.`,
    (summary, taskId) => `Confirmed: ${summary} Task ${taskId}.`,
  ),
  confirmedReview: phrase(
    (summary: string, version: number) => `Подтверждено: ${summary} Версия сессии теперь ${version}.`,
    (summary, version) => `Confirmed: ${summary} The session is now at version ${version}.`,
  ),
  confirmed: phrase(
    (summary: string) => `Подтверждено: ${summary}`,
    (summary) => `Confirmed: ${summary}`,
  ),
  cancelled: phrase(
    (summary: string) => `Отменено: ${summary} Ничего не запущено.`,
    (summary) => `Cancelled: ${summary} Nothing was started.`,
  ),
  needsSession: phrase(
    () => 'Эта команда работает с сессией проверки датасета: отправьте сообщение с dataset_review_session_id.',
    () => 'This works on a dataset review session: send the message with dataset_review_session_id.',
  ),
} as const;
