import { describe, expect, it } from 'vitest';
import { dashboardLines, summarise } from '../../api/reports/report.ts';
import { toEpochMs, toUtcIso } from '../../api/reports/timestamps.ts';

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

  it('reads dashboards[] whatever the id field and status words', () => {
    const task = {
      ...base,
      result: {
        dashboards: [
          { id: 'x', dashboard_title: 'T', status: 'ok' },
          { dashboard_id: 2, status: 'skipped', error: 'already exists' },
          { source_dashboard_id: 3, status: 'imported_with_errors' },
          { dashboard_id: 4, error: { message: 'boom' } },
          'garbage',
        ],
      },
    };
    expect(dashboardLines(task).map((l) => [l.dashboard_id, l.title, l.outcome, l.error])).toEqual([
      ['x', 'T', 'succeeded', null],
      [2, null, 'skipped', 'already exists'],
      [3, null, 'failed', null],
      [4, null, 'failed', 'boom'],
    ]);
    expect(summarise(task)).toMatchObject({ total: 4, succeeded: 1, failed: 2, skipped: 1 });
  });

  it('copes with no result at all', () => {
    expect(summarise({ ...base, result: null })).toMatchObject({ headline: 'llm docs task succeeded', total: 0 });
  });
});
