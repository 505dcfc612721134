/**
 * What the assistant says, in the language of the question: every phrase in Russian and English
 * side by side under one key, none inline in the code that answers. Deterministic: the same
 * situation gives the same words. The operations' phrases are in operation-texts.ts, the dataset
 * review ones in review-texts.ts.
 */
import type { Language, MissingParameter } from './intent.ts';

/** One thing to say, in both languages. */
export type Phrase<A extends unknown[] = []> = Readonly<Record<Language, (...args: A) => string>>;

/** A phrase from its Russian and English wordings (the English takes the Russian's arguments). */
export const phrase = <A extends unknown[]>(ru: (...args: A) => string, en: (...args: NoInfer<A>) => string): Phrase<A> => ({ ru, en });

/** A noun that agrees with a number: Russian forms for one, a few (2–4) and many; the English singular. */
export interface Noun {
  ru: readonly [string, string, string];
  en: string;
}

export const NOUNS = {
  dashboard: { ru: ['дашборд', 'дашборда', 'дашбордов'], en: 'dashboard' },
  /** Genitive ("копию 1 дашборда", "копию 3 дашбордов"). */
  dashboardOf: { ru: ['дашборда', 'дашбордов', 'дашбордов'], en: 'dashboard' },
  dataset: { ru: ['датасет', 'датасета', 'датасетов'], en: 'dataset' },
  datasetOf: { ru: ['датасета', 'датасетов', 'датасетов'], en: 'dataset' },
  /** After "в течение" ("в течение 1 минуты", "10 минут"). */
  minutesWithin: { ru: ['минуты', 'минут', 'минут'], en: 'minute' },
  secondsWithin: { ru: ['секунды', 'секунд', 'секунд'], en: 'second' },
} as const satisfies Record<string, Noun>;

/** "3 дашборда", "1 dashboard". */
export const count = phrase(
  (n: number, noun: Noun) => {
    const mod10 = n % 10;
    const mod100 = n % 100;
    const form = mod10 === 1 && mod100 !== 11 ? 0 : mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14) ? 1 : 2;
    return `${n} ${noun.ru[form]}`;
  },
  (n, noun) => `${n} ${noun.en}${n === 1 ? '' : 's'}`,
);

/** A name in the language's quotes. */
export const quote = phrase(
  (s: string) => `«${s}»`,
  (s) => `"${s}"`,
);

/** How long a confirmation waits, in words: "10 минут", "90 seconds". */
export function lifetimeText(lang: Language, seconds: number): string {
  return seconds % 60 === 0 ? count[lang](seconds / 60, NOUNS.minutesWithin) : count[lang](seconds, NOUNS.secondsWithin);
}

const HELP = phrase(
  (lifetime: string) =>
    [
      'Я понимаю команды на русском и английском:',
      '• «покажи дашборды в dev», «найди дашборд Sales в prod», «датасеты в test», «найди датасеты orders в dev»;',
      '• «статус задачи <id>», «логи задачи <id>», «статус последней задачи»;',
      '• «перенеси дашборды 12, 14 из dev в prod» (добавьте «пробный прогон», чтобы ничего не менять);',
      '• «сделай бэкап дашборда Sales в prod»;',
      '• «сгенерируй документацию для датасета 7 в dev»;',
      '• «git статус дашборда 12 в dev», «закоммить дашборд 12 в dev с сообщением «…»», «задеплой дашборд 12 из dev в prod».',
      'В сообщении, привязанном к сессии проверки датасета (dataset_review_session_id): «покажи сессию», «поле region означает регион продаж», «утверди маппинги», «ответ: …».',
      `Перенос, бэкап, документация, коммит, деплой и изменения сессии выполняются только после вашего подтверждения (в течение ${lifetime}).`,
    ].join('\n'),
  (lifetime) =>
    [
      'I understand commands in English and Russian:',
      '• "list dashboards in dev", "find dashboard Sales in prod", "datasets in test", "search datasets orders in dev";',
      '• "status of task <id>", "logs of task <id>", "status of my last task";',
      '• "migrate dashboards 12, 14 from dev to prod" (add "dry run" to change nothing);',
      '• "back up dashboard Sales in prod";',
      '• "generate docs for dataset 7 in dev";',
      '• "git status of dashboard 12 in dev", "commit dashboard 12 in dev with message "…"", "deploy dashboard 12 from dev to prod".',
      'In a message bound to a dataset review session (dataset_review_session_id): "show the session", "set field region to Sales region", "approve mappings", "answer: …".',
      `Migration, backup, documentation, commit, deploy and session changes run only after you confirm them (within ${lifetime}).`,
    ].join('\n'),
);

/** The help text; `ttlSeconds` is the configured confirmation lifetime. */
export function helpText(lang: Language, ttlSeconds = 600): string {
  return HELP[lang](lifetimeText(lang, ttlSeconds));
}

/** What a missing parameter is called when the assistant asks for it. */
const PARAMETER: Record<MissingParameter, Phrase> = {
  environment: phrase(
    () => 'окружение (например, «в dev»)',
    () => 'the environment (e.g. "in dev")',
  ),
  source_environment: phrase(
    () => 'исходное окружение («из dev»)',
    () => 'the source environment ("from dev")',
  ),
  target_environment: phrase(
    () => 'целевое окружение («в prod»)',
    () => 'the target environment ("to prod")',
  ),
  dashboards: phrase(
    () => 'дашборд (id, название или slug)',
    () => 'the dashboard (id, title or slug)',
  ),
  datasets: phrase(
    () => 'датасет (id или имя таблицы)',
    () => 'the dataset (id or table name)',
  ),
  query: phrase(
    () => 'что искать',
    () => 'what to search for',
  ),
  task_id: phrase(
    () => 'идентификатор задачи',
    () => 'the task id',
  ),
  message: phrase(
    () => 'сообщение коммита (в кавычках)',
    () => 'the commit message (in quotes)',
  ),
  field: phrase(
    () => 'поле (его имя: «поле region …»)',
    () => 'the field (its name: "field region …")',
  ),
  label: phrase(
    () => 'что поле означает («поле region означает регион продаж»)',
    () => 'what the field means ("set field region to Sales region")',
  ),
  answer: phrase(
    () => 'ответ на текущий вопрос («ответ: …»)',
    () => 'the answer to the current question ("answer: …")',
  ),
};

type Thing = 'environment' | 'dashboard' | 'dataset' | 'task';

const NOT_FOUND: Record<Thing, Phrase<[string]>> = {
  environment: phrase(
    (name: string) => `Окружение «${name}» не найдено`,
    (name) => `Environment "${name}" not found`,
  ),
  dashboard: phrase(
    (name: string) => `Дашборд «${name}» не найден`,
    (name) => `Dashboard "${name}" not found`,
  ),
  dataset: phrase(
    (name: string) => `Датасет «${name}» не найден`,
    (name) => `Dataset "${name}" not found`,
  ),
  task: phrase(
    (name: string) => `Задача «${name}» не найдена`,
    (name) => `Task "${name}" not found`,
  ),
};

const SEVERAL: Record<Thing, Phrase> = {
  environment: phrase(
    () => 'окружений',
    () => 'environments',
  ),
  dashboard: phrase(
    () => 'дашбордов',
    () => 'dashboards',
  ),
  dataset: phrase(
    () => 'датасетов',
    () => 'datasets',
  ),
  task: phrase(
    () => 'задач',
    () => 'tasks',
  ),
};

/** The assistant's general answers: not understood, not allowed, not found, several found, confirm. */
export const TEXTS = {
  unknown: phrase(
    () => 'Я не понял команду. Спросите «что ты умеешь?», чтобы увидеть примеры.',
    () => 'I did not understand that. Ask "what can you do?" for examples.',
  ),
  missing: phrase(
    (names: string) => `Уточните, пожалуйста: ${names}.`,
    (names) => `Please tell me ${names}.`,
  ),
  denied: phrase(
    (permission: string) => `У вас нет права ${permission}, нужного для этой операции. Ничего не выполнено.`,
    (permission) => `You do not have the permission ${permission} this needs. Nothing was run.`,
  ),
  unsupported: phrase(
    (verb: string) => `Операцию «${verb}» ассистент не выполняет. Спросите «что ты умеешь?».`,
    (verb) => `The assistant does not do "${verb}". Ask "what can you do?".`,
  ),
  /** A short task id that starts no id of a task the caller may see. */
  noTaskWithPrefix: phrase(
    (prefix: string) =>
      `Нет задачи, чей идентификатор начинается с «${prefix}». Назовите его полностью или спросите «статус последней задачи».`,
    (prefix) => `No task's id starts with "${prefix}". Give the whole id, or ask "status of my last task".`,
  ),
  available: phrase(
    (names: string) => ` Доступны: ${names}.`,
    (names) => ` Available: ${names}.`,
  ),
  ambiguous: phrase(
    (name: string, several: string, candidates: string) =>
      `«${name}» подходит для нескольких ${several}: ${candidates}. Какой вы имеете в виду?`,
    (name, several, candidates) => `"${name}" matches several ${several}: ${candidates}. Which one do you mean?`,
  ),
  confirm: phrase(
    (summary: string, minutes: number, id: string) =>
      `${summary}\nПодтвердите в течение ${minutes} мин. (POST /api/assistant/confirmations/${id}/confirm) или отмените.`,
    (summary, minutes, id) => `${summary}\nConfirm within ${minutes} min (POST /api/assistant/confirmations/${id}/confirm) or cancel.`,
  ),
  tooMany: phrase(
    (max: number) => `Назовите не больше ${max} объектов за раз.`,
    (max) => `Name at most ${max} objects at a time.`,
  ),
  tooLong: phrase(
    (max: number) => `Название длиннее ${max} символов.`,
    (max) => `A name is longer than ${max} characters.`,
  ),
  /** A request the direct route's schema refuses. */
  refused: phrase(
    (why: string) => `Такой запрос не принимается: ${why}.`,
    (why) => `That request is not accepted: ${why}.`,
  ),
} as const;

export function parameterName(lang: Language, p: MissingParameter): string {
  return PARAMETER[p][lang]();
}

export function missingText(lang: Language, missing: MissingParameter[]): string {
  return TEXTS.missing[lang](missing.map((p) => parameterName(lang, p)).join('; '));
}

export function notFoundText(lang: Language, what: Thing, name: string, known?: string[]): string {
  return `${NOT_FOUND[what][lang](name)}.${known?.length ? TEXTS.available[lang](known.join(', ')) : ''}`;
}

export function ambiguousText(lang: Language, what: Thing, name: string, candidates: string[]): string {
  return TEXTS.ambiguous[lang](name, SEVERAL[what][lang](), candidates.join('; '));
}
