import {
  Alert,
  Badge,
  Button,
  Group,
  Modal,
  NumberInput,
  PasswordInput,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { EnvSelect, useEnvironments } from '../components/EnvSelect.tsx';
import { EnvRules } from '../components/EnvRules.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { ValidateButton } from '../components/ValidateDashboard.tsx';
import { useI18n } from '../i18n.tsx';

type Env = NonNullable<ReturnType<typeof useEnvironments>['data']>['items'][number];

export function EnvironmentsPage() {
  const { t } = useI18n();
  const can = useCan();
  const envs = useEnvironments();
  const [editing, setEditing] = useState<Env | 'new' | null>(null);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{t.environments}</Title>
        {can('environments:WRITE') && <Button onClick={() => setEditing('new')}>{t.add}</Button>}
      </Group>
      <ProblemAlert error={envs.error} />
      <Table.ScrollContainer minWidth={700}>
        <Table striped aria-label={t.environments}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t.name}</Table.Th>
              <Table.Th>{t.baseUrl}</Table.Th>
              <Table.Th>{t.username}</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {envs.data?.items.map((e) => (
              <EnvRow key={e.id} env={e} onEdit={() => setEditing(e)} />
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Modal opened={editing !== null} onClose={() => setEditing(null)} title={editing === 'new' ? t.add : t.edit}>
        {editing !== null && <EnvForm env={editing === 'new' ? undefined : editing} onDone={() => setEditing(null)} />}
      </Modal>
      {can('dashboards:READ') && <DbMappings />}
      {can('dashboards:READ') && <EnvRules />}
    </Stack>
  );
}

function EnvRow({ env, onEdit }: { env: Env; onEdit(): void }) {
  const { t } = useI18n();
  const can = useCan();
  const test = useMutation({
    mutationFn: () => must(api.POST('/api/environments/{env_id}/test', { params: { path: { env_id: env.id } } })),
  });
  return (
    <>
      <Table.Tr>
        <Table.Td>
          {env.name} {env.protected && <Badge color="grape">{t.protectedBadge}</Badge>}
        </Table.Td>
        <Table.Td>{env.base_url}</Table.Td>
        <Table.Td>{env.username}</Table.Td>
        <Table.Td>
          <Group gap="xs" wrap="nowrap">
            <Button size="xs" variant="light" onClick={() => test.mutate()} loading={test.isPending}>
              {t.test}
            </Button>
            <ValidateButton envId={env.id} />
            {can('environments:WRITE') && (
              <Button size="xs" variant="subtle" onClick={onEdit}>
                {t.edit}
              </Button>
            )}
          </Group>
        </Table.Td>
      </Table.Tr>
      {(test.data || test.error) && (
        <Table.Tr>
          <Table.Td colSpan={4}>
            <ProblemAlert error={test.error} />
            {test.data && (
              <Alert color={test.data.ok ? 'green' : 'orange'} data-testid="env-test-result">
                {t.envTestResult(test.data)}
                {test.data.missing_permissions.length > 0 && (
                  <Text size="sm">
                    {t.missingPermissions}: {test.data.missing_permissions.join(', ')}
                  </Text>
                )}
              </Alert>
            )}
          </Table.Td>
        </Table.Tr>
      )}
    </>
  );
}

function EnvForm({ env, onDone }: { env?: Env; onDone(): void }) {
  const { t } = useI18n();
  const [name, setName] = useState(env?.name ?? '');
  const [baseUrl, setBaseUrl] = useState(env?.base_url ?? '');
  const [username, setUsername] = useState(env?.username ?? '');
  const [password, setPassword] = useState('');
  const [timeout, setTimeoutSeconds] = useState<number>(env?.timeout_seconds ?? 30);
  const [isProtected, setProtected] = useState(env?.protected ?? false);
  const save = useSaveEnvironment(
    env,
    { name, base_url: baseUrl, username, timeout_seconds: timeout, protected: isProtected },
    password,
    onDone,
  );
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack>
        <TextInput label={t.name} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
        <TextInput
          label={t.baseUrl}
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.currentTarget.value)}
          required
          placeholder="https://bi.example.com"
        />
        <TextInput label={t.username} value={username} onChange={(e) => setUsername(e.currentTarget.value)} required />
        <PasswordInput
          label={env ? t.newPassword : t.password}
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          required={!env}
        />
        <Text size="xs" c="dimmed">
          {t.secretRule}
        </Text>
        <NumberInput label={t.timeoutSeconds} value={timeout} min={1} max={600} onChange={(v) => setTimeoutSeconds(Number(v) || 30)} />
        <Switch label={t.protectedSwitch} checked={isProtected} onChange={(e) => setProtected(e.currentTarget.checked)} />
        <ProblemAlert error={save.error} />
        <Button type="submit" loading={save.isPending}>
          {t.save}
        </Button>
      </Stack>
    </form>
  );
}

/** Creates the environment, or updates it: the password is sent only when a new one was typed (the stored one is write-only). */
function useSaveEnvironment(
  env: Env | undefined,
  common: { name: string; base_url: string; username: string; timeout_seconds: number; protected: boolean },
  password: string,
  onDone: () => void,
) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () =>
      env
        ? must(
            api.PUT('/api/environments/{env_id}', {
              params: { path: { env_id: env.id } },
              body: { ...common, ...(password ? { password } : {}) },
            }),
          )
        : must(api.POST('/api/environments', { body: { ...common, password } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['environments'] });
      onDone();
    },
  });
}

/** Database mappings between two environments: the suggestion with its confidence, the saved one, and a choice. */
function DbMappings() {
  const { t } = useI18n();
  const can = useCan();
  const [source, setSource] = useState<string | null>(null);
  const [target, setTarget] = useState<string | null>(null);
  const [choice, setChoice] = useState<Record<number, string | null>>({});
  const suggestions = useDbMappingSuggestions(source, target);
  const save = useSaveDbMappings(source, target, suggestions.data?.items ?? [], choice);
  return (
    <Stack mt="lg">
      <Title order={3}>{t.mappings}</Title>
      <Group>
        <EnvSelect label={t.source} value={source} onChange={setSource} />
        <EnvSelect label={t.target} value={target} onChange={setTarget} exclude={source} />
      </Group>
      <ProblemAlert error={suggestions.error ?? save.error} />
      {suggestions.data && (
        <Table aria-label={t.mappings}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t.source}</Table.Th>
              <Table.Th>{t.suggestions}</Table.Th>
              <Table.Th>{t.target}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {suggestions.data.items.map((i) => (
              <DbMappingRow
                key={i.source_database.id}
                item={i}
                value={pickedTarget(i, choice)}
                onChange={(v) => setChoice({ ...choice, [i.source_database.id]: v })}
              />
            ))}
          </Table.Tbody>
        </Table>
      )}
      {suggestions.data && can('dashboards:MIGRATE') && (
        <Group>
          <Button onClick={() => save.mutate()} loading={save.isPending}>
            {t.save}
          </Button>
          {save.isSuccess && <Text c="green">✓</Text>}
        </Group>
      )}
    </Stack>
  );
}

type DbMappingItem = NonNullable<ReturnType<typeof useDbMappingSuggestions>['data']>['items'][number];

const useDbMappingSuggestions = (source: string | null, target: string | null) =>
  useQuery({
    queryKey: ['db-mappings', source, target],
    enabled: !!source && !!target,
    queryFn: () => must(api.GET('/api/dashboards/db-mappings', { params: { query: { source_env_id: source!, target_env_id: target! } } })),
  });

/** The target database picked for a source database: the person's choice, else the saved mapping, else the suggestion ('' for none). */
const pickedTarget = (i: DbMappingItem, choice: Record<number, string | null>) =>
  choice[i.source_database.id] ?? String(i.saved_target?.id ?? i.suggested_target?.id ?? '');

/** Saves every source database that has a target picked. */
function useSaveDbMappings(source: string | null, target: string | null, items: DbMappingItem[], choice: Record<number, string | null>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () =>
      must(
        api.PUT('/api/environments/{env_id}/db-mappings/{target_env_id}', {
          params: { path: { env_id: source!, target_env_id: target! } },
          body: {
            mappings: items.flatMap((i) => {
              const picked = pickedTarget(i, choice);
              return picked ? [{ source_database_id: i.source_database.id, target_database_id: Number(picked) }] : [];
            }),
          },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['db-mappings'] }),
  });
}

function DbMappingRow({ item: i, value, onChange }: { item: DbMappingItem; value: string; onChange: (v: string | null) => void }) {
  const { t } = useI18n();
  return (
    <Table.Tr>
      <Table.Td>
        {i.source_database.name}{' '}
        <Text span c="dimmed" size="xs">
          {i.source_database.backend}
        </Text>
      </Table.Td>
      <Table.Td>
        {i.suggested_target ? `${i.suggested_target.name} (${Math.round(i.confidence * 100)}%)` : '—'}
        {i.saved_target && <Badge ml="xs">{t.savedMapping(i.saved_target.name)}</Badge>}
      </Table.Td>
      <Table.Td>
        <Select
          aria-label={`${t.target} ${i.source_database.name}`}
          data={i.candidates.map((c) => ({ value: String(c.id), label: `${c.name} · ${Math.round(c.confidence * 100)}%` }))}
          value={value}
          onChange={onChange}
        />
      </Table.Td>
    </Table.Tr>
  );
}
