import { describe, expect, it } from 'vitest';
import { itemLines, summarise } from '../../api/reports/report.ts';
import { toEpochMs, toUtcIso } from '../../lib/timestamps.ts';

describe('timestamps of mixed flavours', () => {
  it('reads naive values as UTC and aware ones by their offset', () => {
    const instant = Date.UTC(2026, 10, 22, 10, 0, 0);
    for (const v of [
      '2026-11-22 10:00:00',
      '2026-11-22T10:00:00',
      '2026-11-22T10:00:00Z',
      '2026-11-22T12:00:00+02:00',
      '2026-11-22T05:00:00-0500',
      new Date(instant),
      instant,
    ]) {
      expect(toEpochMs(v), String(v)).toBe(instant);
    }
    expect(toUtcIso('2026-11-22 10:00:00.250')).toBe('2026-11-22T10:00:00.250Z');
    // Superset's own forms: lists carry microseconds and `+0000`, details are naive (UTC).
    expect(toUtcIso('2025-06-01T10:20:30.123456+0000')).toBe('2025-06-01T10:20:30.123Z');
    expect(toUtcIso('2025-06-01T10:20:30.123456')).toBe('2025-06-01T10:20:30.123Z');
    expect(toUtcIso('2025-06-01T12:20:30+02')).toBe('2025-06-01T10:20:30.000Z');
    expect(toUtcIso('2025-06-01')).toBe('2025-06-01T00:00:00.000Z');
    expect(toEpochMs(null)).toBeNull();
    expect(toEpochMs('not a date')).toBeNull();
  });

  it('orders a mixed list by instant', () => {
    const values = ['2026-01-01T12:00:00+02:00', '2026-01-01 10:30:00', '2026-01-01T09:00:00Z', '2026-01-01T04:15:00-05:00'];
    const sorted = [...values].sort((a, b) => toEpochMs(b)! - toEpochMs(a)!);
    expect(sorted).toEqual(['2026-01-01 10:30:00', '2026-01-01T12:00:00+02:00', '2026-01-01T04:15:00-05:00', '2026-01-01T09:00:00Z']);
  });
});

describe('report builder on generic task results', () => {
  const base = { type: 'llm_docs' as const, status: 'SUCCEEDED' as const, error: null, params: {}, dashboard_ids: [], progress: null };

  it('reads the shared outcome shape of any task kind, and nothing else', () => {
    const task = {
      ...base,
      result: {
        items: [
          { kind: 'dataset', id: 7, title: 'orders', status: 'documented', outcome: 'succeeded', next_actions: [] },
          { kind: 'dataset', id: 8, title: null, status: 'unchanged', outcome: 'skipped', error: 'no column matched', next_actions: [] },
          {
            kind: 'dataset',
            id: 9,
            title: 'sales',
            status: 'failed',
            outcome: 'failed',
            error: 'Superset answered 422',
            step: 'write',
            next_actions: [],
          },
          'garbage',
        ],
        next_actions: [],
        not_started: 0,
        cancelled: false,
      },
    };
    expect(itemLines(task).map((l) => [l.kind, l.id, l.title, l.outcome, l.error])).toEqual([
      ['dataset', 7, 'orders', 'succeeded', null],
      ['dataset', 8, null, 'skipped', 'no column matched'],
      ['dataset', 9, 'sales', 'failed', 'Superset answered 422'],
    ]);
    expect(summarise(task)).toMatchObject({ total: 3, succeeded: 1, failed: 1, skipped: 1 });
    // A result that is not in the shared shape is not guessed at.
    expect(itemLines({ result: { dashboards: [{ id: 1, status: 'ok' }] } })).toEqual([]);
  });

  it('copes with no result at all', () => {
    expect(summarise({ ...base, result: null })).toMatchObject({ headline: 'llm docs task succeeded', total: 0 });
  });
});
