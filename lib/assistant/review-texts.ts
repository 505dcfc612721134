/**
 * What the assistant says about a bound dataset review session, Russian and English side by side
 * by key: the session shown, the questions it asks, and the summaries of the writes it plans.
 */
import { phrase, quote } from './texts.ts';

export const REVIEW_TEXTS = {
  /** "сессии «Orders review» (версия 4)", as the object of a summary. */
  sessionName: phrase(
    (name: string, version: number) => `сессии ${quote.ru(name)} (версия ${version})`,
    (name, version) => `session ${quote.en(name)} (version ${version})`,
  ),
  question: phrase(
    (text: string, options: string) => `Текущий вопрос: ${text} Варианты: ${options}.`,
    (text, options) => `Current question: ${text} Options: ${options}.`,
  ),
  session: phrase(
    (title: string, state: string, version: number, dataset: { id: number; table_name: string } | null) =>
      `Сессия ${quote.ru(title)}: состояние ${state}, версия ${version}${dataset ? `, датасет #${dataset.id} ${dataset.table_name}` : ''}.`,
    (title, state, version, dataset) =>
      `Session ${quote.en(title)}: state ${state}, version ${version}${dataset ? `, dataset #${dataset.id} ${dataset.table_name}` : ''}.`,
  ),
  noOpenQuestion: phrase(
    () => 'Открытых вопросов нет.',
    () => 'No open question.',
  ),
  unresolved: phrase(
    (n: number, names: string) => `Нерешённые поля (${n}): ${names}.`,
    (n, names) => `Unresolved fields (${n}): ${names}.`,
  ),
  allDescribed: phrase(
    () => 'Все поля описаны.',
    () => 'Every field has a meaning.',
  ),
  mappings: phrase(
    (total: number, unapproved: number) => `Сопоставления: ${total}, не утверждено: ${unapproved}.`,
    (total, unapproved) => `Mappings: ${total}, not approved: ${unapproved}.`,
  ),
  noSuchField: phrase(
    (field: string, names: string[]) => `В сессии нет поля ${quote.ru(field)}. Поля: ${names.join(', ') || 'нет'}.`,
    (field, names) => `The session has no field ${quote.en(field)}. Fields: ${names.join(', ') || 'none'}.`,
  ),
  setField: phrase(
    (field: string, session: string, label: string, was: string | null) =>
      `Задать полю ${quote.ru(field)} ${session} значение ${quote.ru(label)} (было: ${quote.ru(was ?? 'не задано')}); значение станет ручным и заблокированным.`,
    (field, session, label, was) =>
      `Set field ${quote.en(field)} of ${session} to ${quote.en(label)} (was: ${quote.en(was ?? 'unset')}); the value becomes manual and locked.`,
  ),
  noMappings: phrase(
    () => 'В сессии нет сопоставлений фильтров.',
    () => 'The session has no filter mappings.',
  ),
  /** One mapping in an approval's list: "Region → region" or "Region → только фильтр". */
  mapping: phrase(
    (filter: string, variable: string | null) => `${filter} → ${variable ?? 'только фильтр'}`,
    (filter, variable) => `${filter} → ${variable ?? 'filter only'}`,
  ),
  approveMappings: phrase(
    (n: number, session: string, list: string) => `Утвердить ${n} сопоставл. фильтров ${session}: ${list}.`,
    (n, session, list) => `Approve ${n} filter mapping${n === 1 ? '' : 's'} of ${session}: ${list}.`,
  ),
  noQuestionToAnswer: phrase(
    () => 'В сессии нет открытого вопроса.',
    () => 'The session has no open question.',
  ),
  unmatchedAnswer: phrase(
    (answer: string, question: string) => `Не понял ответ ${quote.ru(answer)}. ${question}`,
    (answer, question) => `I could not match the answer ${quote.en(answer)}. ${question}`,
  ),
  answer: phrase(
    (session: string, question: string, shown: string) => `Ответить на вопрос ${session} «${question}»: ${quote.ru(shown)}.`,
    (session, question, shown) => `Answer the question of ${session} "${question}": ${quote.en(shown)}.`,
  ),
} as const;
