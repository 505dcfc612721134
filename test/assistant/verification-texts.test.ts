import { describe, expect, it } from 'vitest';
import { verificationSummaryText } from '../../lib/assistant/verification-texts.ts';

/** The assistant's line on a migration task's verification states (issue 50), in both languages. */
const items = [
  { id: 1, title: 'Sales', outcome: 'succeeded', verification_state: { state: 'verified', checked: 'imported' } },
  { id: 2, title: 'Ops', outcome: 'succeeded', verification_state: { state: 'verified', checked: 'unchanged_target' } },
  { id: 3, title: 'Finance', outcome: 'failed', step: 'verify', verification_state: { state: 'verified', checked: 'unchanged_target' } },
  { id: 4, title: 'HR', outcome: 'succeeded', verification_state: { state: 'carried', from_task_id: 'abc123' } },
  { id: 5, title: 'Draft', outcome: 'planned', verification_state: { state: 'not_verified', reason: 'a dry run' } },
];

describe('the verification line of a migration task', () => {
  it('counts what the task verified, what it carried and from where, what it did not, and names the failing', () => {
    expect(verificationSummaryText('en', items)).toBe(
      'Verification: 3 verified by this task (2 of them unchanged, their target checked again); 1 carried an earlier verification (from task abc123; verification: if_changed); 1 not verified; failed their verification: Finance',
    );
    expect(verificationSummaryText('ru', items)).toBe(
      'Проверка: 3 проверено этой задачей (из них 2 без изменений — целевая среда проверена заново); 1 с перенесённой проверкой (из задач abc123; verification: if_changed); 1 не проверено; не прошли проверку: Finance',
    );
  });

  it('says nothing for a result without states (one from before them)', () => {
    expect(verificationSummaryText('en', [{ id: 1, outcome: 'succeeded' }])).toBeNull();
  });
});
