import { Alert, Anchor, Badge, Button, Code, Group, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ApiError, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { EnvSelect } from '../components/EnvSelect.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { useI18n } from '../i18n.tsx';
import { act } from '../act.ts';

/** A dataset review from a Superset link to launch: one question at a time, fields with provenance and locks, preview, launch. */
export function DatasetReviewPage() {
  const { t } = useI18n();
  const can = useCan();
  const qc = useQueryClient();
  const [params, setParams] = useSearchParams();
  const selected = params.get('session');
  const [env, setEnv] = useState<string | null>(null);
  const [link, setLink] = useState('');
  const sessions = useQuery({ queryKey: ['review-sessions'], queryFn: () => must(api.GET('/api/dataset-review/sessions')) });
  const start = useMutation({
    mutationFn: () => must(api.POST('/api/dataset-review/sessions', { body: { env_id: env!, link } })),
    onSuccess: async (s) => {
      await qc.invalidateQueries({ queryKey: ['review-sessions'] });
      setParams({ session: s.id });
    },
  });
  const items = (sessions.data as unknown as { items?: SessionListItem[] } | undefined)?.items ?? [];
  return (
    <Stack>
      <Title order={2}>{t.datasetReview}</Title>
      {can('dataset_review:WRITE') && (
        <Group align="end">
          <EnvSelect label={t.environment} value={env} onChange={setEnv} />
          <TextInput
            label={t.supersetLink}
            value={link}
            onChange={(e) => setLink(e.currentTarget.value)}
            w={420}
            placeholder="/superset/dashboard/sales/"
          />
          <Button disabled={!env || !link} onClick={() => start.mutate()} loading={start.isPending}>
            {t.add}
          </Button>
        </Group>
      )}
      <ProblemAlert error={sessions.error ?? start.error} />
      <SessionList items={items} selected={selected} />
      {selected && <Session id={selected} />}
    </Stack>
  );
}

type SessionListItem = { id: string; state: string; link: string; dataset?: { table_name?: string } | null };

/** The caller's review sessions, the selected one highlighted. */
function SessionList({ items, selected }: { items: SessionListItem[]; selected: string | null }) {
  return (
    <Table striped>
      <Table.Tbody>
        {items.map((s) => (
          <Table.Tr key={s.id} bg={s.id === selected ? 'blue.0' : undefined}>
            <Table.Td>
              <Anchor component={Link} to={`/dataset-review?session=${s.id}`}>
                {s.dataset?.table_name ?? s.id}
              </Anchor>
            </Table.Td>
            <Table.Td>
              <Badge>{s.state}</Badge>
            </Table.Td>
            <Table.Td>{s.link}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** A session's changes, each sent with the version it was read at; any of them reloads the session when it lands. */
function useSessionActions(id: string, version: number, questionKey: string | undefined) {
  const qc = useQueryClient();
  const path = { session_id: id };
  const reload = () => qc.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith('review-') });
  const answer = useMutation({
    mutationFn: (option: string) =>
      must(
        api.POST('/api/dataset-review/sessions/{session_id}/clarification/answers', {
          params: { path },
          body: { version, question_key: questionKey!, answer: { option } },
        }),
      ),
    onSuccess: reload,
  });
  const lock = useMutation({
    mutationFn: ({ field, locked }: { field: string; locked: boolean }) =>
      locked
        ? must(
            api.POST('/api/dataset-review/sessions/{session_id}/fields/{field_id}/unlock', {
              params: { path: { session_id: id, field_id: field } },
              body: { version },
            }),
          )
        : must(
            api.POST('/api/dataset-review/sessions/{session_id}/fields/{field_id}/lock', {
              params: { path: { session_id: id, field_id: field } },
              body: { version },
            }),
          ),
    onSuccess: reload,
  });
  const preview = useMutation({
    mutationFn: () => must(api.POST('/api/dataset-review/sessions/{session_id}/preview', { params: { path }, body: { version } })),
  });
  const launch = useMutation({
    mutationFn: () => must(api.POST('/api/dataset-review/sessions/{session_id}/launch', { params: { path }, body: { version } })),
    onSuccess: reload,
  });
  return { reload, answer, lock, preview, launch, error: answer.error ?? lock.error ?? preview.error ?? launch.error };
}

function Session({ id }: { id: string }) {
  const { t } = useI18n();
  const can = useCan();
  const session = useReviewSession(id);
  const question = useClarification(id);
  const { reload, answer, lock, preview, launch, error } = useSessionActions(id, session.data?.version ?? 1, question.data?.question?.key);
  const conflict = error instanceof ApiError && error.problem.status === 409;
  const s = session.data;
  if (!s) return <ProblemAlert error={session.error} />;
  const q = question.data?.question;
  const launched = launch.data as { task_id?: string } | undefined;
  return (
    <Paper withBorder p="sm">
      <Stack>
        <Group>
          <Badge size="lg">{s.state}</Badge>
          <Text size="sm">{t.version(s.version)}</Text>
        </Group>
        {conflict ? (
          <Alert color="orange" title={t.changedMeanwhile}>
            {t.sessionChanged}{' '}
            <Button size="compact-xs" onClick={act(reload)}>
              {t.reload}
            </Button>
          </Alert>
        ) : (
          <ProblemAlert error={error} />
        )}
        {q && (
          <QuestionCard
            question={q}
            remaining={question.data?.remaining ?? 0}
            canAnswer={can('dataset_review:WRITE')}
            onAnswer={(option) => answer.mutate(option)}
          />
        )}
        <FieldTable fields={s.fields} onToggleLock={(f) => lock.mutate({ field: f.id, locked: f.locked })} />
        <Group>
          <Button variant="light" onClick={() => preview.mutate()}>
            {t.preview}
          </Button>
          {can('dataset_review:LAUNCH') && (
            <Button color="green" onClick={() => launch.mutate()}>
              {t.launch}
            </Button>
          )}
          {launched?.task_id && <Link to={`/tasks/${launched.task_id}`}>{launched.task_id}</Link>}
        </Group>
        {preview.data && <Code block>{JSON.stringify(preview.data, null, 2).slice(0, 6000)}</Code>}
      </Stack>
    </Paper>
  );
}

type Question = NonNullable<NonNullable<ReturnType<typeof useClarification>['data']>['question']>;

const useClarification = (id: string) =>
  useQuery({
    queryKey: ['review-question', id],
    queryFn: () => must(api.GET('/api/dataset-review/sessions/{session_id}/clarification', { params: { path: { session_id: id } } })),
  });

/** The clarification asked now: its text, how many remain, one button per option. */
function QuestionCard({
  question: q,
  remaining,
  canAnswer,
  onAnswer,
}: {
  question: Question;
  remaining: number;
  canAnswer: boolean;
  onAnswer: (option: string) => void;
}) {
  const { t } = useI18n();
  return (
    <Paper withBorder p="xs" bg="blue.0">
      <Text fw={600}>{q.text}</Text>
      <Text size="xs" c="dimmed">
        {t.questionsRemaining(remaining)}
      </Text>
      <Group gap="xs" mt="xs">
        {q.options.map((o) => (
          <Button key={o.value} size="compact-sm" variant="light" onClick={() => onAnswer(o.value)} disabled={!canAnswer}>
            {String((o as { label?: string }).label ?? o.value)}
          </Button>
        ))}
      </Group>
    </Paper>
  );
}

const useReviewSession = (id: string) =>
  useQuery({
    queryKey: ['review-session', id],
    queryFn: () => must(api.GET('/api/dataset-review/sessions/{session_id}', { params: { path: { session_id: id } } })),
  });
type ReviewField = NonNullable<ReturnType<typeof useReviewSession>['data']>['fields'][number];

/** A session's fields with their provenance and status, each locked or unlocked by its button. */
function FieldTable({ fields, onToggleLock }: { fields: ReviewField[]; onToggleLock: (f: ReviewField) => void }) {
  const { t } = useI18n();
  const can = useCan();
  return (
    <Table>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t.field}</Table.Th>
          <Table.Th>{t.label}</Table.Th>
          <Table.Th>{t.provenance}</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {fields.map((f) => (
          <Table.Tr key={f.id}>
            <Table.Td>
              {f.name}{' '}
              <Text span size="xs" c="dimmed">
                {f.kind}
              </Text>
            </Table.Td>
            <Table.Td>
              {f.label}
              <Text size="xs" c="dimmed">
                {f.description}
              </Text>
            </Table.Td>
            <Table.Td>
              <Badge variant="outline">{f.provenance}</Badge>{' '}
              <Badge color={f.status === 'needs_review' ? 'orange' : 'gray'}>{f.status}</Badge>
            </Table.Td>
            <Table.Td>
              <Button
                size="compact-xs"
                variant="subtle"
                onClick={() => onToggleLock(f)}
                disabled={!can('dataset_review:WRITE')}
                aria-label={f.locked ? t.unlock : t.lock}
              >
                {f.locked ? '🔒' : '🔓'}
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
