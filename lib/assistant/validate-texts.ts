/**
 * The assistant's words for the content validator ("проверь прод", "validate prod"): a
 * validation only reads, so it starts at once and its summary says it started.
 */
import { phrase } from './texts.ts';

export const VALIDATE_TEXTS = {
  started: phrase(
    (env: string, ids: readonly number[]) =>
      `Запущена проверка ${ids.length ? `дашбордов ${ids.join(', ')}` : 'всех дашбордов'} окружения ${env}: запрос каждого чарта выполняется в Superset, ничего не меняется. Итог: по каждому дашборду и чарту, что сломалось с прошлой проверки.`,
    (env, ids) =>
      `Started validating ${ids.length ? `dashboards ${ids.join(', ')}` : 'every dashboard'} of ${env}: each chart's query runs in Superset, nothing changes. The result lists each dashboard and chart, and what broke since the last validation.`,
  ),
  notIds: phrase(
    () => 'Назовите дашборды номерами (например «проверь дашборды 3, 5 в прод») или проверьте всё окружение.',
    () => 'Name the dashboards by their ids (say "validate dashboards 3, 5 in prod"), or validate the whole environment.',
  ),
};
