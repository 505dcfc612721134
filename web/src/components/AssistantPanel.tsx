import { Button, Card, Drawer, Group, ScrollArea, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, must } from '../api.ts';
import { useI18n } from '../i18n.tsx';

type Reply = Awaited<ReturnType<typeof send>>;
const send = (text: string, conversation_id?: string) =>
  must(api.POST('/api/assistant/messages', { body: { text, ...(conversation_id ? { conversation_id } : {}) } }));

interface Entry {
  who: 'me' | 'assistant';
  text: string;
  reply?: Reply;
  decided?: string;
}

/** The assistant on every page: Russian or English, a risky command shows a card to confirm or cancel. */
export function AssistantPanel() {
  const { t } = useI18n();
  const [opened, { open, close }] = useDisclosure();
  const [text, setText] = useState('');
  const [conversation, setConversation] = useState<string>();
  const [entries, setEntries] = useState<Entry[]>([]);
  const ask = useMutation({
    mutationFn: (q: string) => send(q, conversation),
    onSuccess: (r) => {
      setConversation(r.conversation_id);
      setEntries((e) => [...e, { who: 'assistant', text: r.text, reply: r }]);
    },
  });
  const decide = useMutation({
    mutationFn: async ({ id, action }: { id: string; action: 'confirm' | 'cancel'; index: number }) =>
      action === 'confirm'
        ? ((await must(api.POST('/api/assistant/confirmations/{id}/confirm', { params: { path: { id } } }))) as {
            task_id?: string;
            text?: string;
          })
        : ((await must(api.POST('/api/assistant/confirmations/{id}/cancel', { params: { path: { id } } }))) as {
            task_id?: string;
            text?: string;
          }),
    onSuccess: (r, v) =>
      setEntries((e) => e.map((x, i) => (i === v.index ? { ...x, decided: v.action === 'confirm' ? `✓ ${r.task_id ?? ''}` : '✗' } : x))),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) return;
    setEntries((x) => [...x, { who: 'me', text }]);
    ask.mutate(text);
    setText('');
  };
  return (
    <>
      <Button onClick={open} size="xs" variant="light">
        {t.assistant}
      </Button>
      <Drawer opened={opened} onClose={close} position="right" title={t.assistant} size="md">
        <Stack h="calc(100vh - 100px)">
          <ScrollArea style={{ flex: 1 }}>
            <Stack gap="xs">
              {entries.map((e, i) => (
                <Card
                  key={i}
                  withBorder
                  padding="xs"
                  bg={e.who === 'me' ? 'blue.0' : undefined}
                  ml={e.who === 'me' ? 'xl' : 0}
                  mr={e.who === 'me' ? 0 : 'xl'}
                >
                  <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
                    {e.text}
                  </Text>
                  {e.reply?.confirmation && (
                    <Card withBorder mt="xs" padding="xs" bg="yellow.0" data-testid="confirmation-card">
                      <Text size="sm" fw={600}>
                        {e.reply.confirmation.summary}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {e.reply.intent.operation} · {e.reply.intent.risk_level} · {t.until} {t.time(e.reply.confirmation.expires_at)}
                      </Text>
                      {e.decided ? (
                        <Text size="sm">{e.decided}</Text>
                      ) : (
                        <Group gap="xs" mt={4}>
                          <Button
                            size="compact-sm"
                            color="green"
                            onClick={() => decide.mutate({ id: e.reply!.confirmation!.id, action: 'confirm', index: i })}
                          >
                            {t.confirm}
                          </Button>
                          <Button
                            size="compact-sm"
                            variant="light"
                            color="red"
                            onClick={() => decide.mutate({ id: e.reply!.confirmation!.id, action: 'cancel', index: i })}
                          >
                            {t.cancel}
                          </Button>
                        </Group>
                      )}
                    </Card>
                  )}
                  {e.reply?.task_id && (
                    <Link to={`/tasks/${e.reply.task_id}`} onClick={close}>
                      {t.tasks}: {e.reply.task_id}
                    </Link>
                  )}
                </Card>
              ))}
              {(ask.error || decide.error) && (
                <Text c="red" size="sm">
                  {String((ask.error ?? (decide.error as Error)).message)}
                </Text>
              )}
            </Stack>
          </ScrollArea>
          <form onSubmit={submit}>
            <Group gap="xs" wrap="nowrap">
              <TextInput
                aria-label={t.assistant}
                value={text}
                onChange={(e) => setText(e.currentTarget.value)}
                style={{ flex: 1 }}
                placeholder={t.assistantPlaceholder}
              />
              <Button type="submit" loading={ask.isPending}>
                {t.send}
              </Button>
            </Group>
          </form>
        </Stack>
      </Drawer>
    </>
  );
}
