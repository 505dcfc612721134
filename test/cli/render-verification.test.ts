import { describe, expect, it } from 'vitest';
import { renderTask, verificationCell } from '../../cli/render.ts';

/** The CLI's task table says each migrated dashboard's verification state (issue 50): verified by this task, or carried from an earlier one. */
describe('the VERIFICATION column', () => {
  it('shows verified (with the target checked again for an unchanged one), carried with its task and time, and not verified', () => {
    const at = '2026-12-01T10:00:00.000Z';
    const items = [
      {
        id: 1,
        title: 'Sales',
        status: 'unchanged',
        outcome: 'succeeded',
        verification_state: { state: 'verified', at, checked: 'unchanged_target' },
      },
      {
        id: 2,
        title: 'Ops',
        status: 'unchanged',
        outcome: 'succeeded',
        verification_state: { state: 'carried', at, from_task_id: 'migration-abc' },
      },
      { id: 3, title: 'Draft', status: 'planned', outcome: 'planned', verification_state: { state: 'not_verified', reason: 'a dry run' } },
    ];
    expect(items.map(verificationCell)).toEqual([
      'verified 2026-12-01 10:00:00 (target checked again)',
      'carried from task migration-abc (2026-12-01 10:00:00)',
      'not verified',
    ]);
    const out = renderTask({ id: 'migration-1', status: 'SUCCEEDED', type: 'migration', items, next_actions: [] });
    expect(out).toMatch(/VERIFICATION/);
    expect(out).toContain('carried from task');
    // A task without states (another kind, or a result from before them) keeps its table as it was.
    expect(
      renderTask({ id: 'backup-1', status: 'SUCCEEDED', items: [{ id: 1, status: 'backed_up', outcome: 'succeeded' }], next_actions: [] }),
    ).not.toMatch(/VERIFICATION/);
  });
});
