/**
 * The assistant on a message bound to a dataset review session: show it (state, the open
 * question, unresolved fields), and plan its writes (a field's meaning, approving the mappings,
 * answering the current question). Writes are never run here: each becomes a confirmation that
 * carries the session version shown, so confirming after the session changed answers 409.
 */
import type { PlannedAction } from '../../db/assistant/confirmations.ts';
import { normaliseText } from '../../lib/assistant/normalise.ts';
import type { Entities, Language } from '../../lib/assistant/parser.ts';
import type { BoundQuestion, BoundReviewSession } from './binder.ts';
import { Clarification } from './resolve.ts';

const q = (lang: Language, s: string) => (lang === 'ru' ? `«${s}»` : `"${s}"`);
const MAX_LISTED = 20;

export type ReviewPlan =
  | { kind: 'show'; text: string; data: Record<string, unknown> }
  | { kind: 'confirm'; summary: string; action: Extract<PlannedAction, { type: 'dataset_review' }>; resolved: Record<string, unknown> };

function sessionName(lang: Language, s: BoundReviewSession): string {
  const name = s.title ?? s.dataset?.table_name ?? s.id;
  return lang === 'ru' ? `сессии ${q(lang, name)} (версия ${s.version})` : `session ${q(lang, name)} (version ${s.version})`;
}

function questionLine(lang: Language, question: BoundQuestion): string {
  const options = question.options.map((o, i) => `${i + 1}. ${o.label} [${o.value}]`).join('; ');
  return lang === 'ru'
    ? `Текущий вопрос: ${question.text} Варианты: ${options}.`
    : `Current question: ${question.text} Options: ${options}.`;
}

export function showSession(lang: Language, s: BoundReviewSession): ReviewPlan {
  const unresolved = s.fields.filter((f) => f.status === 'unresolved' || f.status === 'needs_review').map((f) => f.name);
  const unapproved = s.mappings.filter((m) => !m.approved).length;
  const lines =
    lang === 'ru'
      ? [
          `Сессия ${q(lang, s.title ?? s.id)}: состояние ${s.state}, версия ${s.version}${s.dataset ? `, датасет #${s.dataset.id} ${s.dataset.table_name}` : ''}.`,
          s.question ? questionLine(lang, s.question) : 'Открытых вопросов нет.',
          unresolved.length
            ? `Нерешённые поля (${unresolved.length}): ${unresolved.slice(0, MAX_LISTED).join(', ')}.`
            : 'Все поля описаны.',
          `Сопоставления: ${s.mappings.length}, не утверждено: ${unapproved}.`,
        ]
      : [
          `Session ${q(lang, s.title ?? s.id)}: state ${s.state}, version ${s.version}${s.dataset ? `, dataset #${s.dataset.id} ${s.dataset.table_name}` : ''}.`,
          s.question ? questionLine(lang, s.question) : 'No open question.',
          unresolved.length
            ? `Unresolved fields (${unresolved.length}): ${unresolved.slice(0, MAX_LISTED).join(', ')}.`
            : 'Every field has a meaning.',
          `Mappings: ${s.mappings.length}, not approved: ${unapproved}.`,
        ];
  return { kind: 'show', text: lines.join('\n'), data: { unresolved_fields: unresolved, open_question: s.question } };
}

export function planSetField(lang: Language, s: BoundReviewSession, e: Entities): ReviewPlan {
  const wanted = normaliseText(e.field!);
  const field = s.fields.find((f) => f.name === e.field) ?? s.fields.find((f) => normaliseText(f.name) === wanted);
  if (!field) {
    const names = s.fields.map((f) => f.name).slice(0, MAX_LISTED);
    throw new Clarification(
      lang === 'ru'
        ? `В сессии нет поля ${q(lang, e.field!)}. Поля: ${names.join(', ') || 'нет'}.`
        : `The session has no field ${q(lang, e.field!)}. Fields: ${names.join(', ') || 'none'}.`,
      { not_found: 'field', mention: e.field, candidates: names },
    );
  }
  const label = e.label!.slice(0, 500);
  const was = field.label ?? (lang === 'ru' ? 'не задано' : 'unset');
  const summary =
    lang === 'ru'
      ? `Задать полю ${q(lang, field.name)} ${sessionName(lang, s)} значение ${q(lang, label)} (было: ${q(lang, was)}); значение станет ручным и заблокированным.`
      : `Set field ${q(lang, field.name)} of ${sessionName(lang, s)} to ${q(lang, label)} (was: ${q(lang, was)}); the value becomes manual and locked.`;
  return {
    kind: 'confirm',
    summary,
    action: { type: 'dataset_review', op: 'set_field', sessionId: s.id, version: s.version, fieldId: field.id, label },
    resolved: { field: { id: field.id, name: field.name, label: field.label }, label, session_version: s.version },
  };
}

export function planApproveMappings(lang: Language, s: BoundReviewSession): ReviewPlan {
  if (!s.mappings.length) {
    throw new Clarification(lang === 'ru' ? 'В сессии нет сопоставлений фильтров.' : 'The session has no filter mappings.', {
      not_found: 'mapping',
    });
  }
  const list = s.mappings
    .map((m) => `${m.filter_name ?? m.filter_id} → ${m.variable ?? (lang === 'ru' ? 'только фильтр' : 'filter only')}`)
    .join(', ');
  const summary =
    lang === 'ru'
      ? `Утвердить ${s.mappings.length} сопоставл. фильтров ${sessionName(lang, s)}: ${list}.`
      : `Approve ${s.mappings.length} filter mapping${s.mappings.length === 1 ? '' : 's'} of ${sessionName(lang, s)}: ${list}.`;
  return {
    kind: 'confirm',
    summary,
    action: { type: 'dataset_review', op: 'approve_mappings', sessionId: s.id, version: s.version },
    resolved: { mappings: s.mappings.map((m) => ({ id: m.id, filter: m.filter_name, variable: m.variable })), session_version: s.version },
  };
}

const SKIP_WORDS = new Set(['skip', 'пропустить', 'пропусти', 'пропуск', 'none', 'нет', 'ничего']);

/** The option an answer names: its value, its number, its label; for a field's meaning, any other text is the meaning. */
function chooseOption(question: BoundQuestion, text: string): { option: string; label?: string } | undefined {
  const t = normaliseText(text);
  const byValue = question.options.find((o) => normaliseText(o.value) === t);
  if (byValue) return { option: byValue.value };
  if (/^\d{1,3}$/.test(t)) {
    const n = Number(t);
    if (question.kind === 'dataset_choice' && question.options.some((o) => o.value === t)) return { option: t };
    if (n >= 1 && n <= question.options.length) return { option: question.options[n - 1]!.value };
  }
  const byLabel = question.options.find((o) => normaliseText(o.label) === t || normaliseText(o.label).startsWith(`${t} `));
  if (byLabel) return { option: byLabel.value };
  if (SKIP_WORDS.has(t)) {
    const skip = question.options.find((o) => ['skip', 'none', 'keep_current'].includes(o.value));
    if (skip) return { option: skip.value };
  }
  if (question.kind === 'field_meaning') return { option: 'set', label: text.slice(0, 500) };
  return undefined;
}

export function planAnswer(lang: Language, s: BoundReviewSession, e: Entities): ReviewPlan {
  const question = s.question;
  if (!question) {
    throw new Clarification(lang === 'ru' ? 'В сессии нет открытого вопроса.' : 'The session has no open question.', {
      not_found: 'question',
    });
  }
  const chosen = chooseOption(question, e.answer!);
  if (!chosen) {
    throw new Clarification(
      lang === 'ru'
        ? `Не понял ответ ${q(lang, e.answer!)}. ${questionLine(lang, question)}`
        : `I could not match the answer ${q(lang, e.answer!)}. ${questionLine(lang, question)}`,
      { invalid: 'answer', question },
    );
  }
  const shown = chosen.label ?? question.options.find((o) => o.value === chosen.option)?.label ?? chosen.option;
  const summary =
    lang === 'ru'
      ? `Ответить на вопрос ${sessionName(lang, s)} «${question.text}»: ${q(lang, shown)}.`
      : `Answer the question of ${sessionName(lang, s)} "${question.text}": ${q(lang, shown)}.`;
  return {
    kind: 'confirm',
    summary,
    action: {
      type: 'dataset_review',
      op: 'answer',
      sessionId: s.id,
      version: s.version,
      questionKey: question.key,
      option: chosen.option,
      ...(chosen.label !== undefined ? { label: chosen.label } : {}),
    },
    resolved: { question: { key: question.key, kind: question.kind }, option: chosen.option, session_version: s.version },
  };
}
