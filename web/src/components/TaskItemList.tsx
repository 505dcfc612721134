import { Badge, Box, Button, Group, Loader, SegmentedControl, Text, TextInput } from '@mantine/core';
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useDeferredValue, useEffect, useRef, useState } from 'react';
import type { ItemOutcome } from '../../../contracts/outcomes.ts';
import { api, must } from '../api.ts';
import { useI18n } from '../i18n.tsx';
import { TaskItemDetail } from './TaskItemDetail.tsx';

/** What the list can show; each is an `outcome` value of the items endpoint (contracts/outcomes.ts ITEM_FILTERS). */
const FILTERS = ['all', 'failed', 'changed', 'unchanged'] as const;
type Filter = (typeof FILTERS)[number];
const PAGE = 100;
const ROW = 44;
const OUTCOME_COLOR: Record<string, string> = { succeeded: 'green', failed: 'red', skipped: 'yellow', planned: 'blue' };

type Row = { position: number; change: 'changed' | 'unchanged' | null; item: ItemOutcome };

function actionCounts(item: ItemOutcome): string {
  const objects = (item as { objects?: Array<{ action: string }> }).objects;
  if (!Array.isArray(objects)) return '';
  const n = (a: string) => objects.filter((o) => o.action === a).length;
  return (['create', 'update'] as const).flatMap((a) => (n(a) ? [`${a} ${n(a)}`] : [])).join(' · ');
}

/**
 * A task's items as a list a person can hold 1,000 of: read from the items endpoint a page at a
 * time as it scrolls, only the rows in view in the page (virtualised), filtered and searched on the
 * server, each opened on demand (a lone item is open from the start).
 */
export function TaskItemList({ taskId, type, total, status }: { taskId: string; type: string; total: number; status: string }) {
  const { t } = useI18n();
  const [filter, setFilter] = useState<Filter>('all');
  const [search, setSearch] = useState('');
  const q = useDeferredValue(search.trim());
  const [open, setOpen] = useState<Set<number>>(new Set());
  const items = useTaskItems(taskId, filter, q, total, status);
  const rows = (items.data?.pages.flatMap((p) => p.items) ?? []) as unknown as Row[];
  const matching = items.data?.pages[0]?.total ?? 0;
  const { scroller, virtual } = useVirtualRows(rows.length, items, [filter, q]);
  const toggle = (p: number) => setOpen((s) => (s.has(p) ? new Set([...s].filter((x) => x !== p)) : new Set([...s, p])));
  const isOpen = (p: number) => open.has(p) || total === 1;
  return (
    <Box data-testid="task-items">
      <Group justify="space-between" mb="xs">
        <SegmentedControl
          aria-label={t.itemFilter}
          data={FILTERS.map((f) => ({ value: f, label: f === 'all' ? t.allItems : f }))}
          value={filter}
          onChange={(v) => setFilter(v as Filter)}
        />
        <TextInput
          placeholder={t.searchTitles}
          aria-label={t.searchTitles}
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          w={280}
        />
        <Text size="sm" c="dimmed" data-testid="items-matching">
          {t.itemsMatching(matching, total)}
        </Text>
      </Group>
      {items.isLoading && <Loader size="sm" />}
      {!items.isLoading && !rows.length && <Text c="dimmed">{t.noItemsMatch}</Text>}
      <div
        ref={scroller}
        style={{ maxHeight: 560, overflowY: 'auto', contain: 'strict', height: rows.length ? Math.min(560, virtual.getTotalSize()) : 0 }}
        data-testid="task-items-scroller"
      >
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {virtual.getVirtualItems().map((v) => {
            const r = rows[v.index]!;
            return (
              <div
                key={r.position}
                data-index={v.index}
                ref={virtual.measureElement}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${v.start}px)` }}
                data-testid="task-item-row"
              >
                <ItemSummary row={r} open={isOpen(r.position)} onToggle={() => toggle(r.position)} />
                {isOpen(r.position) && <TaskItemDetail taskId={taskId} type={type} item={r.item} />}
              </div>
            );
          })}
        </div>
      </div>
    </Box>
  );
}

function useTaskItems(taskId: string, filter: Filter, q: string, total: number, status: string) {
  return useInfiniteQuery({
    // Read again as items arrive and once the task ends (a verification amends its items); the rows shown stay until then.
    queryKey: ['task-items', taskId, filter, q, total, status],
    placeholderData: keepPreviousData,
    initialPageParam: 1,
    queryFn: ({ pageParam }) =>
      must(
        api.GET('/api/tasks/{task_id}/items', {
          params: {
            path: { task_id: taskId },
            query: { page: pageParam, page_size: PAGE, ...(filter === 'all' ? {} : { outcome: [filter] }), ...(q ? { q } : {}) },
          },
        }),
      ),
    getNextPageParam: (last) => (last.has_next ? last.page + 1 : undefined),
  });
}

/** Only the rows in view rendered; back to the top when `restart` changes; the next page read as the end comes into view. */
function useVirtualRows(count: number, items: ReturnType<typeof useTaskItems>, restart: unknown[]) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 6 });
  // A new filter or search starts at its first item, not where the last list was scrolled to.
  // The filter and search alone re-run it (the virtualizer is another object every render).
  useEffect(() => virtual.scrollToOffset(0), restart);
  const last = virtual.getVirtualItems().at(-1);
  useEffect(() => {
    if (last && last.index >= count - 10 && items.hasNextPage && !items.isFetchingNextPage) items.fetchNextPage().catch(reportError);
    // The position and the page state alone re-run it (`items` is another object every render).
  }, [last?.index, count, items.hasNextPage, items.isFetchingNextPage]);
  return { scroller, virtual };
}

/** An item's line: the toggle for its detail, title, id, outcome, status when it differs, change, and error or action counts. */
function ItemSummary({ row: r, open, onToggle }: { row: Row; open: boolean; onToggle: () => void }) {
  const { t } = useI18n();
  return (
    <Group wrap="nowrap" gap="sm" h={ROW} style={{ borderBottom: '1px solid var(--mantine-color-default-border)' }}>
      <Button
        size="compact-xs"
        variant="subtle"
        onClick={onToggle}
        aria-expanded={open}
        aria-label={`${open ? t.hideDetails : t.showDetails} ${r.item.title ?? r.item.id}`}
      >
        {open ? '▾' : '▸'}
      </Button>
      <Text size="sm" fw={500} truncate style={{ flex: 1 }} data-testid="task-item-title">
        {r.item.title ?? `#${r.item.id}`}
      </Text>
      <Text size="xs" c="dimmed">
        #{String(r.item.id)}
      </Text>
      <Badge color={OUTCOME_COLOR[r.item.outcome] ?? 'gray'} variant="light" data-testid="task-item-outcome">
        {r.item.outcome}
      </Badge>
      {r.item.status !== r.item.outcome && <Badge variant="outline">{r.item.status}</Badge>}
      {r.change && (
        <Badge color={r.change === 'changed' ? 'orange' : 'gray'} variant="dot" data-testid="task-item-change">
          {r.change}
        </Badge>
      )}
      <Text size="xs" w={140} truncate>
        {r.item.error ?? actionCounts(r.item)}
      </Text>
    </Group>
  );
}
