import { Badge, Group, Image, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import type { BrowserCheck } from '../../../contracts/browser-check.ts';
import { authFetch } from '../api.ts';
import { useI18n } from '../i18n.tsx';

const VERDICT_COLOR: Record<BrowserCheck['verdict'], string> = { passes: 'green', failed: 'red', not_verifiable: 'gray' };

/** A task item's browser check, wherever its kind keeps it (a migration's or deploy's verification, a publish's item). */
function browserOf(item: unknown): BrowserCheck | undefined {
  const i = item as { verification?: { browser?: BrowserCheck }; browser?: BrowserCheck };
  return i.verification?.browser ?? i.browser;
}

/**
 * The browser check of each item that had one (`verification: "browser"`): its verdict and reason,
 * and the target's screenshot beside the source's, so a person sees what the check saw.
 */
export function BrowserScreenshots({ taskId, items }: { taskId: string; items: Array<{ id: string | number; title?: string | null }> }) {
  const { t } = useI18n();
  const checked = items.flatMap((i) => {
    const b = browserOf(i);
    return b ? [{ item: i, b }] : [];
  });
  if (!checked.length) return null;
  return (
    <Stack data-testid="browser-check">
      <Title order={4}>{t.browserCheck}</Title>
      {checked.map(({ item, b }) => (
        <Stack key={String(item.id)} gap="xs">
          <Group>
            <Text fw={500}>{item.title ?? item.id}</Text>
            <Badge color={VERDICT_COLOR[b.verdict]}>{b.verdict}</Badge>
            <Text size="sm" c="dimmed">
              {(b.duration_ms / 1000).toFixed(1)} s
            </Text>
          </Group>
          {b.reason && <Text size="sm">{b.reason}</Text>}
          <SimpleGrid cols={2}>
            <Shot taskId={taskId} id={b.target_screenshot_id} label={t.screenshotTarget} side="target" />
            <Shot taskId={taskId} id={b.source_screenshot_id} label={t.screenshotSource} side="source" />
          </SimpleGrid>
        </Stack>
      ))}
    </Stack>
  );
}

/** One screenshot through the API (it needs the bearer token, so not a plain <img src>). */
function Shot({ taskId, id, label, side }: { taskId: string; id?: string; label: string; side: 'target' | 'source' }) {
  const { t } = useI18n();
  const [url, setUrl] = useState<string>();
  const [hidden, setHidden] = useState(false);
  useEffect(() => {
    if (!id) return;
    const abort = new AbortController();
    let objectUrl: string | undefined;
    authFetch(`/api/tasks/${encodeURIComponent(taskId)}/screenshots/${encodeURIComponent(id)}`, { signal: abort.signal })
      .then(async (res) => {
        // 403: the screenshot is the requester's and admins' alone (docs/security.md#the-browser-check).
        if (res.status === 403) setHidden(true);
        if (res.status !== 200) return;
        objectUrl = URL.createObjectURL(await res.blob());
        setUrl(objectUrl);
      })
      .catch(() => undefined);
    return () => {
      abort.abort();
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [taskId, id]);
  return (
    <Stack gap={4}>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      {url ? (
        <Image src={url} alt={label} data-testid={`screenshot-${side}`} />
      ) : (
        <Text size="sm" c="dimmed" data-testid={hidden ? `screenshot-${side}-hidden` : undefined}>
          {hidden ? t.screenshotHidden : '—'}
        </Text>
      )}
    </Stack>
  );
}
