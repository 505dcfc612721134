import { Button, Center, Image, Loader, Stack, Text } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { authFetch } from '../api.ts';
import { useI18n } from '../i18n.tsx';

type State =
  | { kind: 'loading' }
  | { kind: 'image'; url: string }
  | { kind: 'computing'; retryAfter: number }
  | { kind: 'off' }
  | { kind: 'failed'; status: number };

/** Starts loading this far before a card scrolls into view, so a slow scroll rarely sees a spinner. */
const LOOKAHEAD = '200px';

/** True once the element has come near the viewport (then stays true: a loaded image is kept). */
function useSeen<T extends Element>() {
  const ref = useRef<T>(null);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || seen) return;
    if (typeof IntersectionObserver === 'undefined') return setSeen(true);
    const observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && setSeen(true), {
      rootMargin: LOOKAHEAD,
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [seen]);
  return [ref, seen] as const;
}

/**
 * A dashboard's thumbnail through the API (it needs the bearer token, so not a plain <img src>),
 * asked for only when the card scrolls near the viewport: a page of 24 cards costs Superset only
 * the renders a person can see. 202 means Superset is still rendering it: a placeholder, a retry
 * after the advertised delay, and a button to ask again at once. A JSON `{status: "off"}` means
 * thumbnails are off in that Superset: a placeholder saying so, nothing to retry.
 */
export function Thumbnail({ envId, dashboardId, title }: { envId: string; dashboardId: number; title: string }) {
  const { t } = useI18n();
  const [ref, seen] = useSeen<HTMLDivElement>();
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (!seen) return;
    const abort = new AbortController();
    let objectUrl: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    authFetch(`/api/dashboards/${dashboardId}/thumbnail?env_id=${encodeURIComponent(envId)}`, { signal: abort.signal })
      .then(async (res) => {
        const json = (res.headers.get('content-type') ?? '').includes('json');
        if (res.status === 200 && json) {
          const body = (await res.json()) as { status: string };
          setState(body.status === 'off' ? { kind: 'off' } : { kind: 'failed', status: res.status });
        } else if (res.status === 200) {
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
  }, [envId, dashboardId, attempt, seen]);
  if (state.kind === 'image') return <Image src={state.url} alt={title} h={140} fit="cover" data-testid="thumbnail" />;
  return (
    <Center ref={ref} h={140} bg="gray.1" data-testid="thumbnail-placeholder" data-state={state.kind}>
      {state.kind === 'loading' ? (
        <Loader size="sm" />
      ) : state.kind === 'off' ? (
        <Text size="xs" c="dimmed" ta="center" px="xs">
          {t.thumbnailsOff}
        </Text>
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
