/**
 * The assistant's line on a migration task's verification states (issue 50: a rerun says what it
 * checked), in the asker's language: how many dashboards the task verified itself (of them, how
 * many unchanged ones had their target checked again), how many carried an earlier task's
 * verification (`verification: "if_changed"`, and from which tasks), how many were not verified,
 * and which failed their verification. Read from the items' `verification_state`
 * (contracts/migration.ts); results without it get no line.
 */
import type { Language } from './intent.ts';

interface StateLike {
  state?: unknown;
  checked?: unknown;
  from_task_id?: unknown;
}
interface ItemLike {
  title?: unknown;
  id?: unknown;
  outcome?: unknown;
  step?: unknown;
  verification_state?: StateLike;
}

/** Titles named of the dashboards whose verification failed. */
const NAMED = 3;

export function verificationSummaryText(lang: Language, items: readonly unknown[]): string | null {
  const states = items.filter((i): i is ItemLike => typeof i === 'object' && i !== null && 'verification_state' in i);
  if (!states.length) return null;
  const of = (s: string) => states.filter((i) => i.verification_state?.state === s);
  const verified = of('verified');
  const rechecked = verified.filter((i) => i.verification_state?.checked === 'unchanged_target').length;
  const carried = of('carried');
  const from = [...new Set(carried.map((i) => String(i.verification_state?.from_task_id ?? '?')))];
  const none = of('not_verified').length;
  const failing = states.filter((i) => i.outcome === 'failed' && i.step === 'verify').map((i) => String(i.title ?? i.id));
  const named = failing.slice(0, NAMED).join(', ') + (failing.length > NAMED ? '…' : '');
  if (lang === 'ru')
    return [
      `Проверка: ${verified.length} проверено этой задачей${rechecked ? ` (из них ${rechecked} без изменений — целевая среда проверена заново)` : ''}`,
      carried.length ? `${carried.length} с перенесённой проверкой (из задач ${from.join(', ')}; verification: if_changed)` : '',
      none ? `${none} не проверено` : '',
      failing.length ? `не прошли проверку: ${named}` : '',
    ]
      .filter(Boolean)
      .join('; ');
  return [
    `Verification: ${verified.length} verified by this task${rechecked ? ` (${rechecked} of them unchanged, their target checked again)` : ''}`,
    carried.length ? `${carried.length} carried an earlier verification (from task ${from.join(', ')}; verification: if_changed)` : '',
    none ? `${none} not verified` : '',
    failing.length ? `failed their verification: ${named}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
