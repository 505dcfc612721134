/**
 * What the assistant says, in the language of the question. Deterministic: the same situation
 * gives the same words.
 */
import type { Language, MissingParameter } from './parser.ts';

type Texts = Record<Language, string>;

const HELP: Texts = {
  ru: [
    'Я понимаю команды на русском и английском:',
    '• «покажи дашборды в dev», «найди дашборд Sales в prod», «датасеты в test», «найди датасеты orders в dev»;',
    '• «статус задачи <id>», «логи задачи <id>», «статус последней задачи»;',
    '• «перенеси дашборды 12, 14 из dev в prod» (добавьте «пробный прогон», чтобы ничего не менять);',
    '• «сделай бэкап дашборда Sales в prod»;',
    '• «сгенерируй документацию для датасета 7 в dev»;',
    '• «git статус дашборда 12 в dev», «закоммить дашборд 12 в dev с сообщением «…»», «задеплой дашборд 12 из dev в prod».',
    'В сообщении, привязанном к сессии проверки датасета (dataset_review_session_id): «покажи сессию», «поле region означает регион продаж», «утверди маппинги», «ответ: …».',
    'Перенос, бэкап, документация, коммит, деплой и изменения сессии выполняются только после вашего подтверждения (в течение {lifetime}).',
  ].join('\n'),
  en: [
    'I understand commands in English and Russian:',
    '• "list dashboards in dev", "find dashboard Sales in prod", "datasets in test", "search datasets orders in dev";',
    '• "status of task <id>", "logs of task <id>", "status of my last task";',
    '• "migrate dashboards 12, 14 from dev to prod" (add "dry run" to change nothing);',
    '• "back up dashboard Sales in prod";',
    '• "generate docs for dataset 7 in dev";',
    '• "git status of dashboard 12 in dev", "commit dashboard 12 in dev with message "…"", "deploy dashboard 12 from dev to prod".',
    'In a message bound to a dataset review session (dataset_review_session_id): "show the session", "set field region to Sales region", "approve mappings", "answer: …".',
    'Migration, backup, documentation, commit, deploy and session changes run only after you confirm them (within {lifetime}).',
  ].join('\n'),
};

const UNKNOWN: Texts = {
  ru: 'Я не понял команду. Спросите «что ты умеешь?», чтобы увидеть примеры.',
  en: 'I did not understand that. Ask "what can you do?" for examples.',
};

const PARAMETER: Record<MissingParameter, Texts> = {
  environment: { ru: 'окружение (например, «в dev»)', en: 'the environment (e.g. "in dev")' },
  source_environment: { ru: 'исходное окружение («из dev»)', en: 'the source environment ("from dev")' },
  target_environment: { ru: 'целевое окружение («в prod»)', en: 'the target environment ("to prod")' },
  dashboards: { ru: 'дашборд (id, название или slug)', en: 'the dashboard (id, title or slug)' },
  datasets: { ru: 'датасет (id или имя таблицы)', en: 'the dataset (id or table name)' },
  query: { ru: 'что искать', en: 'what to search for' },
  task_id: { ru: 'идентификатор задачи', en: 'the task id' },
  message: { ru: 'сообщение коммита (в кавычках)', en: 'the commit message (in quotes)' },
  field: { ru: 'поле (его имя: «поле region …»)', en: 'the field (its name: "field region …")' },
  label: {
    ru: 'что поле означает («поле region означает регион продаж»)',
    en: 'what the field means ("set field region to Sales region")',
  },
  answer: { ru: 'ответ на текущий вопрос («ответ: …»)', en: 'the answer to the current question ("answer: …")' },
};

/** How long a confirmation waits, in words: "10 минут", "90 seconds". */
export function lifetimeText(lang: Language, seconds: number): string {
  const [n, unit] = seconds % 60 === 0 ? [seconds / 60, 'min'] : [seconds, 'sec'];
  if (lang === 'en') return `${n} ${unit === 'min' ? 'minute' : 'second'}${n === 1 ? '' : 's'}`;
  const mod10 = n % 10;
  const mod100 = n % 100;
  const i = mod10 === 1 && mod100 !== 11 ? 0 : mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14) ? 1 : 2;
  return `${n} ${(unit === 'min' ? ['минуты', 'минут', 'минут'] : ['секунды', 'секунд', 'секунд'])[i]}`;
}

/** The help text; `ttlSeconds` is the configured confirmation lifetime. */
export function helpText(lang: Language, ttlSeconds = 600): string {
  return HELP[lang].replace('{lifetime}', lifetimeText(lang, ttlSeconds));
}

export function unknownText(lang: Language): string {
  return UNKNOWN[lang];
}

export function parameterName(lang: Language, p: MissingParameter): string {
  return PARAMETER[p][lang];
}

export function missingText(lang: Language, missing: MissingParameter[]): string {
  const names = missing.map((p) => parameterName(lang, p)).join(lang === 'ru' ? '; ' : '; ');
  return lang === 'ru' ? `Уточните, пожалуйста: ${names}.` : `Please tell me ${names}.`;
}

export function deniedText(lang: Language, permission: string): string {
  return lang === 'ru'
    ? `У вас нет права ${permission}, нужного для этой операции. Ничего не выполнено.`
    : `You do not have the permission ${permission} this needs. Nothing was run.`;
}

export function unsupportedText(lang: Language, verb: string): string {
  return lang === 'ru'
    ? `Операцию «${verb}» ассистент не выполняет. Спросите «что ты умеешь?».`
    : `The assistant does not do "${verb}". Ask "what can you do?".`;
}

export function notFoundText(
  lang: Language,
  what: 'environment' | 'dashboard' | 'dataset' | 'task',
  name: string,
  known?: string[],
): string {
  const ru = {
    environment: 'Окружение «%» не найдено',
    dashboard: 'Дашборд «%» не найден',
    dataset: 'Датасет «%» не найден',
    task: 'Задача «%» не найдена',
  }[what];
  const en = {
    environment: 'Environment "%" not found',
    dashboard: 'Dashboard "%" not found',
    dataset: 'Dataset "%" not found',
    task: 'Task "%" not found',
  }[what];
  const list = known?.length ? (lang === 'ru' ? ` Доступны: ${known.join(', ')}.` : ` Available: ${known.join(', ')}.`) : '';
  return `${(lang === 'ru' ? ru : en).replace('%', name)}.${list}`;
}

export function ambiguousText(lang: Language, what: 'environment' | 'dashboard' | 'dataset', name: string, candidates: string[]): string {
  const ru = { environment: 'окружений', dashboard: 'дашбордов', dataset: 'датасетов' }[what];
  const en = { environment: 'environments', dashboard: 'dashboards', dataset: 'datasets' }[what];
  return lang === 'ru'
    ? `«${name}» подходит для нескольких ${ru}: ${candidates.join('; ')}. Какой вы имеете в виду?`
    : `"${name}" matches several ${en}: ${candidates.join('; ')}. Which one do you mean?`;
}

export function confirmPrompt(lang: Language, summary: string, minutes: number): string {
  return lang === 'ru'
    ? `${summary}\nПодтвердите в течение ${minutes} мин. (POST /api/assistant/confirmations/{id}/confirm) или отмените.`
    : `${summary}\nConfirm within ${minutes} min (POST /api/assistant/confirmations/{id}/confirm) or cancel.`;
}
