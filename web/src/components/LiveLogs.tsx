import { Badge, Code, Group, ScrollArea, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { followEvents } from '../api.ts';
import { useI18n } from '../i18n.tsx';

interface LogLine {
  id: string;
  ts: string;
  level: string;
  source: string;
  message: string;
}

const LEVEL_COLOR: Record<string, string> = { error: 'red.7', warn: 'orange.7', info: 'dark', debug: 'dimmed', trace: 'dimmed' };

/** The task's log stream (server-sent events) as it happens, until its `end` event. */
export function LiveLogs({ taskId }: { taskId: string }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<'following' | 'ended' | 'interrupted'>('following');
  const viewport = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const abort = new AbortController();
    setLines([]);
    setState('following');
    followEvents(
      `/api/tasks/${encodeURIComponent(taskId)}/logs/stream`,
      (e) => {
        if (e.event === 'log') setLines((l) => [...l.slice(-1999), e.data as LogLine]);
        else if (e.event === 'status') qc.invalidateQueries({ queryKey: ['task', taskId] }).catch(reportError);
        else if (e.event === 'end') {
          setState('ended');
          qc.invalidateQueries({ queryKey: ['task', taskId] }).catch(reportError);
        } else if (e.event === 'error') setState('interrupted');
      },
      abort.signal,
    ).catch(() => !abort.signal.aborted && setState('interrupted'));
    return () => abort.abort();
  }, [taskId, qc]);
  useEffect(() => {
    viewport.current?.scrollTo({ top: viewport.current.scrollHeight });
  }, [lines]);
  return (
    <div>
      <Group>
        <Text fw={600}>{t.liveLogs}</Text>
        <Badge color={state === 'following' ? 'blue' : state === 'ended' ? 'green' : 'red'} data-testid="log-state">
          {t.logState[state]}
        </Badge>
      </Group>
      <ScrollArea h={360} viewportRef={viewport} type="auto" tabIndex={0} aria-label={t.liveLogs}>
        <Code block data-testid="live-logs">
          {lines.map((l) => (
            <Text key={l.id} size="xs" c={LEVEL_COLOR[l.level] ?? 'dark'} ff="monospace">
              {l.ts.slice(11, 23)} [{l.source}] {l.message}
            </Text>
          ))}
        </Code>
      </ScrollArea>
    </div>
  );
}
