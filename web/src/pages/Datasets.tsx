import {
  Badge,
  Button,
  Code,
  FileInput,
  Group,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Textarea,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, authFetch, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { DatasetImpact } from '../components/DatasetImpact.tsx';
import { EnvSelect } from '../components/EnvSelect.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { FINISHED, STATUS_COLOR, useTask } from '../components/tasks.ts';
import { useI18n } from '../i18n.tsx';
import { act } from '../act.ts';

/** Datasets of an environment; one selected: LLM suggestions beside current values, a mapping spreadsheet, the change history with undo. */
export function DatasetsPage() {
  const { t } = useI18n();
  const [params, setParams] = useSearchParams();
  const env = params.get('env');
  const selected = params.get('dataset') ? Number(params.get('dataset')) : null;
  const [search, setSearch] = useState('');
  const set = (k: string, v: string | null) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next);
  };
  const list = useQuery({
    queryKey: ['datasets', env, search],
    enabled: !!env,
    queryFn: () => must(api.GET('/api/datasets', { params: { query: { env_id: env!, page_size: 100, ...(search ? { search } : {}) } } })),
  });
  return (
    <Stack>
      <Title order={2}>{t.datasets}</Title>
      <Group align="end">
        <EnvSelect label={t.environment} value={env} onChange={(v) => set('env', v)} />
        <TextInput label={t.search} value={search} onChange={(e) => setSearch(e.currentTarget.value)} />
      </Group>
      <ProblemAlert error={list.error} />
      <SimpleGrid cols={{ base: 1, lg: selected ? 2 : 1 }}>
        <Table striped highlightOnHover aria-label={t.datasets}>
          <Table.Tbody>
            {list.data?.items.map((d) => (
              <Table.Tr key={d.id} bg={selected === d.id ? 'blue.0' : undefined}>
                <Table.Td>
                  <Button variant="subtle" size="compact-sm" onClick={() => set('dataset', String(d.id))}>
                    {d.table_name}
                  </Button>
                </Table.Td>
                <Table.Td>{d.database?.name}</Table.Td>
                <Table.Td>{d.kind}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        {env && selected !== null && <Dataset env={env} id={selected} />}
      </SimpleGrid>
    </Stack>
  );
}

/** One dataset: its LLM suggestions beside the current values, a mapping spreadsheet, its change history. */
function Dataset({ env, id }: { env: string; id: number }) {
  const can = useCan();
  const qc = useQueryClient();
  const suggestions = useSuggestions(env, id);
  const refresh = () => qc.invalidateQueries({ predicate: (q) => ['suggestions', 'changes'].includes(String(q.queryKey[0])) });
  return (
    <Paper withBorder p="sm">
      <Stack>
        <ProblemAlert error={suggestions.error} />
        {can('datasets:WRITE') && <GenerateSuggestions env={env} id={id} onReady={act(() => suggestions.refetch())} />}
        <Suggestions env={env} id={id} items={suggestions.data?.items ?? []} refresh={refresh} />
        {can('datasets:WRITE') && <MappingUpload env={env} id={id} />}
        <ChangeHistory env={env} id={id} refresh={refresh} />
        <DatasetImpact env={env} id={id} />
      </Stack>
    </Paper>
  );
}

const useSuggestions = (env: string, id: number) =>
  useQuery({
    queryKey: ['suggestions', env, id],
    queryFn: () =>
      must(
        api.GET('/api/datasets/{dataset_id}/suggestions', {
          params: { path: { dataset_id: String(id) }, query: { env_id: env, page_size: 100, status: 'all' } },
        }),
      ),
  });
type Suggestion = NonNullable<ReturnType<typeof useSuggestions>['data']>['items'][number];

/** Asks an LLM for the dataset's descriptions (a task, followed here); `onReady` when it has finished. */
function GenerateSuggestions({ env, id, onReady }: { env: string; id: number; onReady: () => void }) {
  const { t, lang } = useI18n();
  const can = useCan();
  const [provider, setProvider] = useState<string | null>('default');
  const providers = useQuery({
    queryKey: ['llm-providers'],
    enabled: can('admin:settings:WRITE'),
    queryFn: () => must(api.GET('/api/admin/llm-providers')),
  });
  const generate = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/datasets/generate-docs', {
          body: { env_id: env, dataset_ids: [id], llm_provider: provider ?? 'default', language: lang },
        }),
      ),
  });
  // The suggestions arrive when the generating task finishes: follow it, then reload them.
  const generating = useTask(generate.data?.task_id);
  const finished = !!generating.data && FINISHED.includes(generating.data.status);
  useEffect(() => {
    if (finished) onReady();
  }, [finished]);
  return (
    <>
      <ProblemAlert error={generate.error} />
      <Group align="end">
        <Select
          label={t.llm}
          data={[
            { value: 'default', label: t.defaultProvider },
            ...(providers.data?.items ?? []).map((p) => ({ value: p.id, label: p.name })),
          ]}
          value={provider}
          onChange={setProvider}
          w={200}
        />
        <Button onClick={() => generate.mutate()} loading={generate.isPending}>
          {t.suggestions}
        </Button>
        {generate.data && (
          <Link to={`/tasks/${generate.data.task_id}`}>
            <Badge color={STATUS_COLOR[generating.data?.status ?? 'PENDING']} data-testid="generate-status">
              {generating.data?.status ?? 'PENDING'}
            </Badge>
          </Link>
        )}
        <Button variant="subtle" onClick={onReady} aria-label={t.refresh}>
          ↻
        </Button>
      </Group>
    </>
  );
}

/** The suggestions beside the current values: each pending one edited, accepted or rejected, or all accepted at once. */
function Suggestions({ env, id, items, refresh }: { env: string; id: number; items: Suggestion[]; refresh: () => Promise<unknown> }) {
  const { t } = useI18n();
  const can = useCan();
  const path = { dataset_id: String(id) };
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [overwrite, setOverwrite] = useState(false);
  const accept = useMutation({
    mutationFn: (ids: string[]) =>
      must(
        api.POST('/api/datasets/{dataset_id}/suggestions/accept', {
          params: { path },
          body: { env_id: env, items: ids.map((s) => ({ suggestion_id: s, overwrite, ...(edits[s] ? { value: edits[s] } : {}) })) },
        }),
      ),
    onSuccess: refresh,
  });
  const reject = useMutation({
    mutationFn: (ids: string[]) =>
      must(api.POST('/api/datasets/{dataset_id}/suggestions/reject', { params: { path }, body: { env_id: env, suggestion_ids: ids } })),
    onSuccess: refresh,
  });
  const pending = items.filter((s) => s.status === 'pending');
  return (
    <>
      <ProblemAlert error={accept.error ?? reject.error} />
      <Title order={4}>{t.suggestions}</Title>
      <Table aria-label={t.suggestions}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t.field}</Table.Th>
            <Table.Th>{t.currentValue}</Table.Th>
            <Table.Th>{t.suggestedValue}</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {items.map((s) => (
            <SuggestionRow
              key={s.id}
              suggestion={s}
              decidable={s.status === 'pending' && can('datasets:WRITE')}
              value={edits[s.id] ?? s.value}
              onEdit={(value) => setEdits({ ...edits, [s.id]: value })}
              onAccept={() => accept.mutate([s.id])}
              onReject={() => reject.mutate([s.id])}
            />
          ))}
        </Table.Tbody>
      </Table>
      {pending.length > 0 && can('datasets:WRITE') && (
        <Group>
          <Button color="green" onClick={() => accept.mutate(pending.map((s) => s.id))}>
            {t.acceptAll(pending.length)}
          </Button>
          <Switch label={t.overwritePersonValues} checked={overwrite} onChange={(e) => setOverwrite(e.currentTarget.checked)} />
        </Group>
      )}
    </>
  );
}

/** One suggestion: editable with accept and reject while it is pending and the person may write, else its value and status. */
function SuggestionRow({
  suggestion: s,
  decidable,
  value,
  onEdit,
  onAccept,
  onReject,
}: {
  suggestion: Suggestion;
  decidable: boolean;
  value: string;
  onEdit: (value: string) => void;
  onAccept: () => void;
  onReject: () => void;
}) {
  const { t } = useI18n();
  return (
    <Table.Tr data-testid="suggestion">
      <Table.Td>
        {s.column_name ?? 'dataset'}.{s.field}
        {s.person_written && (
          <Badge size="xs" color="orange" ml={4}>
            {t.personWritten}
          </Badge>
        )}
      </Table.Td>
      <Table.Td>{s.current_value ?? '—'}</Table.Td>
      <Table.Td>
        {decidable ? (
          <Textarea
            aria-label={t.suggestionFor(s.column_name ?? 'dataset', s.field)}
            autosize
            value={value}
            onChange={(e) => onEdit(e.currentTarget.value)}
          />
        ) : (
          <Text size="sm">{s.accepted_value ?? s.value}</Text>
        )}
      </Table.Td>
      <Table.Td>
        {decidable ? (
          <Group gap={4} wrap="nowrap">
            <Button size="compact-xs" color="green" onClick={onAccept}>
              {t.accept}
            </Button>
            <Button size="compact-xs" color="red" variant="light" onClick={onReject}>
              {t.reject}
            </Button>
          </Group>
        ) : (
          <Badge data-testid="suggestion-status">{s.status}</Badge>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

/** A column-mapping spreadsheet for the dataset, sent as a task. */
function MappingUpload({ env, id }: { env: string; id: number }) {
  const { t } = useI18n();
  const [file, setFile] = useState<File | null>(null);
  // The spreadsheet goes as multipart form data, which the typed JSON client does not model.
  const upload = useMutation({
    mutationFn: async () => {
      const form = new FormData();
      form.set('env_id', env);
      form.set('dataset_ids', String(id));
      form.set('source_type', 'xlsx');
      form.set('file', file!);
      const res = await authFetch('/api/datasets/map-columns', { method: 'POST', body: form });
      const body = await res.json();
      if (!res.ok) throw new Error(body.detail ?? body.title);
      return body as { task_id: string };
    },
  });
  return (
    <>
      <ProblemAlert error={upload.error} />
      <Group align="end">
        <FileInput label={t.mappingSpreadsheet} value={file} onChange={setFile} accept=".xlsx" w={300} />
        <Button disabled={!file} onClick={() => upload.mutate()} loading={upload.isPending}>
          {t.save}
        </Button>
        {upload.data && <Link to={`/tasks/${upload.data.task_id}`}>{upload.data.task_id}</Link>}
      </Group>
    </>
  );
}

/** The dataset's applied changes, each undone by its button. */
function ChangeHistory({ env, id, refresh }: { env: string; id: number; refresh: () => Promise<unknown> }) {
  const { t } = useI18n();
  const can = useCan();
  const changes = useQuery({
    queryKey: ['changes', env, id],
    queryFn: () =>
      must(api.GET('/api/datasets/{dataset_id}/changes', { params: { path: { dataset_id: String(id) }, query: { env_id: env } } })),
  });
  const undo = useMutation({
    mutationFn: (change: string) =>
      must(api.POST('/api/datasets/changes/{change_id}/undo', { params: { path: { change_id: change } }, body: {} })),
    onSuccess: refresh,
  });
  return (
    <>
      <ProblemAlert error={undo.error} />
      <Title order={4}>{t.history}</Title>
      <Table>
        <Table.Tbody>
          {changes.data?.items.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>{c.source}</Table.Td>
              <Table.Td>{c.actor.username}</Table.Td>
              <Table.Td>
                <Badge>{c.status}</Badge>
              </Table.Td>
              <Table.Td>
                <Code>{c.fields.map((f) => `${f.column_name ?? 'dataset'}.${f.field}`).join(', ')}</Code>
              </Table.Td>
              <Table.Td>
                {c.status === 'applied' && can('datasets:WRITE') && (
                  <Button size="compact-xs" variant="light" onClick={() => undo.mutate(c.id)}>
                    {t.undo}
                  </Button>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </>
  );
}
