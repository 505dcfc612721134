import { Button, Center, Image, Loader, Stack, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { authFetch } from '../api.ts';
import { useI18n } from '../i18n.tsx';

type State = { kind: 'loading' } | { kind: 'image'; url: string } | { kind: 'computing'; retryAfter: number } | { kind: 'failed'; status: number };

/**
 * A dashboard's thumbnail through the API (it needs the bearer token, so not a plain <img src>).
 * 202 means Superset is still rendering it: a placeholder, a retry after the advertised delay,
 * and a button to ask again at once.
 */
export function Thumbnail({ envId, dashboardId, title }: { envId: string; dashboardId: number; title: string }) {
  const { t } = useI18n();
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    let objectUrl: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    authFetch(`/api/dashboards/${dashboardId}/thumbnail?env_id=${encodeURIComponent(envId)}`, { signal: abort.signal })
      .then(async (res) => {
        if (res.status === 200) {
          objectUrl = URL.createObjectURL(await res.blob());
          setState({ kind: 'image', url: objectUrl });
        } else if (res.status === 202) {
          const body = (await res.json()) as { retry_after_seconds: number };
          const retryAfter = Math.min(Math.max(body.retry_after_seconds, 1), 30);
          setState({ kind: 'computing', retryAfter });
          if (attempt < 10) timer = setTimeout(() => setAttempt((a) => a + 1), retryAfter * 1000);
        } else setState({ kind: 'failed', status: res.status });
      })
      .catch(() => undefined);
    return () => {
      abort.abort();
      if (timer) clearTimeout(timer);
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [envId, dashboardId, attempt]);
  if (state.kind === 'image') return <Image src={state.url} alt={title} h={140} fit="cover" data-testid="thumbnail" />;
  return (
    <Center h={140} bg="gray.1" data-testid="thumbnail-placeholder">
      {state.kind === 'loading' ? (
        <Loader size="sm" />
      ) : (
        <Stack gap={4} align="center">
          <Text size="xs" c="dimmed">
            {state.kind === 'computing' ? t.rendering : `HTTP ${state.status}`}
          </Text>
          <Button size="compact-xs" variant="light" onClick={() => setAttempt((a) => a + 1)}>
            {t.retry}
          </Button>
        </Stack>
      )}
    </Center>
  );
}
