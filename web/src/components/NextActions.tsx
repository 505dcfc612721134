import { Anchor, Badge, Button, Code, Group, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import type { NextAction } from '../../../contracts/outcomes.ts';
import { authFetch } from '../api.ts';
import { useI18n } from '../i18n.tsx';
import { act } from '../act.ts';

/** Next actions; those with an exact request become buttons that send it through the API (a started task is linked). */
export function NextActions({ actions, title }: { actions: NextAction[]; title?: string }) {
  const { t } = useI18n();
  const [answer, setAnswer] = useState<{ status: number; text: string; taskId?: string }>();
  if (!actions.length) return null;
  return (
    <Stack gap="xs" data-testid="next-actions">
      <Title order={4}>{title ?? t.nextActions}</Title>
      {actions.map((a, n) => (
        <Group key={n} wrap="nowrap">
          {a.request ? (
            <Button
              size="xs"
              variant="light"
              style={{ flexShrink: 0 }}
              onClick={act(async () => {
                const res = await authFetch(a.request!.path, {
                  method: a.request!.method,
                  headers: { 'content-type': 'application/json' },
                  body: a.request!.body === undefined ? undefined : JSON.stringify(a.request!.body),
                });
                const text = await res.text();
                let taskId: string | undefined;
                try {
                  taskId = (JSON.parse(text) as { task_id?: string }).task_id;
                } catch {
                  taskId = undefined; // not JSON: shown as it came
                }
                setAnswer({ status: res.status, text, taskId });
              })}
            >
              {a.action}
            </Button>
          ) : (
            <Badge variant="outline" style={{ flexShrink: 0 }}>
              {a.action}
            </Badge>
          )}
          <Text size="sm">{a.description}</Text>
        </Group>
      ))}
      {answer?.taskId && (
        <Anchor component={Link} to={`/tasks/${answer.taskId}`} data-testid="started-task">
          {t.openStartedTask}
        </Anchor>
      )}
      {answer && <Code block>{`${answer.status} ${answer.text}`}</Code>}
    </Stack>
  );
}
