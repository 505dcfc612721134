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

type Decide = (id: string, action: 'confirm' | 'cancel', index: number) => void;

/** The assistant on every page: Russian or English, a risky command shows a card to confirm or cancel. */
export function AssistantPanel() {
  const { t } = useI18n();
  const [opened, { open, close }] = useDisclosure();
  const { entries, ask, decide, say } = useConversation();
  const onDecide: Decide = (id, action, index) => decide.mutate({ id, action, index });
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
                <EntryCard key={i} entry={e} index={i} onDecide={onDecide} onFollow={close} />
              ))}
              {(ask.error || decide.error) && (
                <Text c="red" size="sm">
                  {String((ask.error ?? (decide.error as Error)).message)}
                </Text>
              )}
            </Stack>
          </ScrollArea>
          <AskForm onAsk={say} pending={ask.isPending} />
        </Stack>
      </Drawer>
    </>
  );
}

/** One conversation: what was said both ways, and each confirmation card's decision once made. */
function useConversation() {
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
  const say = (text: string) => {
    setEntries((x) => [...x, { who: 'me', text }]);
    ask.mutate(text);
  };
  return { entries, ask, decide, say };
}

function EntryCard({ entry: e, index, onDecide, onFollow }: { entry: Entry; index: number; onDecide: Decide; onFollow: () => void }) {
  const { t } = useI18n();
  return (
    <Card withBorder padding="xs" bg={e.who === 'me' ? 'blue.0' : undefined} ml={e.who === 'me' ? 'xl' : 0} mr={e.who === 'me' ? 0 : 'xl'}>
      <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
        {e.text}
      </Text>
      {e.reply?.confirmation && (
        <ConfirmationCard reply={e.reply} decided={e.decided} onDecide={(action) => onDecide(e.reply!.confirmation!.id, action, index)} />
      )}
      {e.reply?.task_id && (
        <Link to={`/tasks/${e.reply.task_id}`} onClick={onFollow}>
          {t.tasks}: {e.reply.task_id}
        </Link>
      )}
    </Card>
  );
}

function ConfirmationCard({
  reply,
  decided,
  onDecide,
}: {
  reply: Reply;
  decided: string | undefined;
  onDecide: (action: 'confirm' | 'cancel') => void;
}) {
  const { t } = useI18n();
  return (
    <Card withBorder mt="xs" padding="xs" bg="yellow.0" data-testid="confirmation-card">
      <Text size="sm" fw={600}>
        {reply.confirmation!.summary}
      </Text>
      <Text size="xs" c="dimmed">
        {reply.intent.operation} · {reply.intent.risk_level} · {t.until} {t.time(reply.confirmation!.expires_at)}
      </Text>
      {decided ? (
        <Text size="sm">{decided}</Text>
      ) : (
        <Group gap="xs" mt={4}>
          <Button size="compact-sm" color="green" onClick={() => onDecide('confirm')}>
            {t.confirm}
          </Button>
          <Button size="compact-sm" variant="light" color="red" onClick={() => onDecide('cancel')}>
            {t.cancel}
          </Button>
        </Group>
      )}
    </Card>
  );
}

function AskForm({ onAsk, pending }: { onAsk: (text: string) => void; pending: boolean }) {
  const { t } = useI18n();
  const [text, setText] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) return;
    onAsk(text);
    setText('');
  };
  return (
    <form onSubmit={submit}>
      <Group gap="xs" wrap="nowrap">
        <TextInput
          aria-label={t.assistant}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          style={{ flex: 1 }}
          placeholder={t.assistantPlaceholder}
        />
        <Button type="submit" loading={pending}>
          {t.send}
        </Button>
      </Group>
    </form>
  );
}
