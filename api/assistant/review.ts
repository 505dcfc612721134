/**
 * The assistant on a message bound to a dataset review session: show it (state, the open
 * question, unresolved fields), and plan its writes (a field's meaning, approving the mappings,
 * answering the current question). Writes are never run here: each is an action that carries
 * the session version shown, so confirming after the session changed answers 409.
 */
import type { Entities, Language } from '../../lib/assistant/intent.ts';
import { normaliseText } from '../../lib/assistant/normalise.ts';
import { REVIEW_TEXTS } from '../../lib/assistant/review-texts.ts';
import type { BoundQuestion, BoundReviewSession } from './binder.ts';
import type { Plan } from './operations/types.ts';
import { Clarification } from './resolve.ts';

const MAX_LISTED = 20;

function sessionName(lang: Language, s: BoundReviewSession): string {
  return REVIEW_TEXTS.sessionName[lang](s.title ?? s.dataset?.table_name ?? s.id, s.version);
}

function questionLine(lang: Language, question: BoundQuestion): string {
  return REVIEW_TEXTS.question[lang](question.text, question.options.map((o, i) => `${i + 1}. ${o.label} [${o.value}]`).join('; '));
}

export function showSession(lang: Language, s: BoundReviewSession): Plan {
  const unresolved = s.fields.filter((f) => f.status === 'unresolved' || f.status === 'needs_review').map((f) => f.name);
  const unapproved = s.mappings.filter((m) => !m.approved).length;
  const lines = [
    REVIEW_TEXTS.session[lang](s.title ?? s.id, s.state, s.version, s.dataset),
    s.question ? questionLine(lang, s.question) : REVIEW_TEXTS.noOpenQuestion[lang](),
    unresolved.length
      ? REVIEW_TEXTS.unresolved[lang](unresolved.length, unresolved.slice(0, MAX_LISTED).join(', '))
      : REVIEW_TEXTS.allDescribed[lang](),
    REVIEW_TEXTS.mappings[lang](s.mappings.length, unapproved),
  ];
  return {
    kind: 'read',
    text: lines.join('\n'),
    data: { unresolved_fields: unresolved, open_question: s.question },
    outcome: { session_id: s.id, session_version: s.version },
  };
}

export function planSetField(lang: Language, s: BoundReviewSession, e: Entities): Plan {
  const wanted = normaliseText(e.field!);
  const field = s.fields.find((f) => f.name === e.field) ?? s.fields.find((f) => normaliseText(f.name) === wanted);
  if (!field) {
    const names = s.fields.map((f) => f.name).slice(0, MAX_LISTED);
    throw new Clarification(REVIEW_TEXTS.noSuchField[lang](e.field!, names), { not_found: 'field', mention: e.field, candidates: names });
  }
  const label = e.label!.slice(0, 500);
  return {
    kind: 'act',
    summary: REVIEW_TEXTS.setField[lang](field.name, sessionName(lang, s), label, field.label),
    action: { type: 'dataset_review', op: 'set_field', sessionId: s.id, version: s.version, fieldId: field.id, label },
    resolved: { ...e, field: { id: field.id, name: field.name, label: field.label }, label, session_version: s.version },
  };
}

export function planApproveMappings(lang: Language, s: BoundReviewSession, e: Entities): Plan {
  if (!s.mappings.length) throw new Clarification(REVIEW_TEXTS.noMappings[lang](), { not_found: 'mapping' });
  const list = s.mappings.map((m) => REVIEW_TEXTS.mapping[lang](m.filter_name ?? m.filter_id, m.variable)).join(', ');
  return {
    kind: 'act',
    summary: REVIEW_TEXTS.approveMappings[lang](s.mappings.length, sessionName(lang, s), list),
    action: { type: 'dataset_review', op: 'approve_mappings', sessionId: s.id, version: s.version },
    resolved: {
      ...e,
      mappings: s.mappings.map((m) => ({ id: m.id, filter: m.filter_name, variable: m.variable })),
      session_version: s.version,
    },
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

export function planAnswer(lang: Language, s: BoundReviewSession, e: Entities): Plan {
  const question = s.question;
  if (!question) throw new Clarification(REVIEW_TEXTS.noQuestionToAnswer[lang](), { not_found: 'question' });
  const chosen = chooseOption(question, e.answer!);
  if (!chosen) {
    throw new Clarification(REVIEW_TEXTS.unmatchedAnswer[lang](e.answer!, questionLine(lang, question)), { invalid: 'answer', question });
  }
  const shown = chosen.label ?? question.options.find((o) => o.value === chosen.option)?.label ?? chosen.option;
  return {
    kind: 'act',
    summary: REVIEW_TEXTS.answer[lang](sessionName(lang, s), question.text, shown),
    action: {
      type: 'dataset_review',
      op: 'answer',
      sessionId: s.id,
      version: s.version,
      questionKey: question.key,
      option: chosen.option,
      ...(chosen.label !== undefined ? { label: chosen.label } : {}),
    },
    resolved: { ...e, question: { key: question.key, kind: question.kind }, option: chosen.option, session_version: s.version },
  };
}
