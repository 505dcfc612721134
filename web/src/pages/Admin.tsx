import {
  Alert,
  Badge,
  Button,
  CopyButton,
  Code,
  Group,
  MultiSelect,
  PasswordInput,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../api.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { useI18n } from '../i18n.tsx';

/** Users, roles, group mappings, API keys (the raw key shown once), security events, LLM providers. */
export function AdminPage() {
  const { t } = useI18n();
  return (
    <Stack>
      <Title order={2}>{t.admin}</Title>
      <Tabs defaultValue="users" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="users">{t.users}</Tabs.Tab>
          <Tabs.Tab value="roles">{t.roles}</Tabs.Tab>
          <Tabs.Tab value="groups">{t.groupMappings}</Tabs.Tab>
          <Tabs.Tab value="keys">{t.apiKeys}</Tabs.Tab>
          <Tabs.Tab value="events">{t.securityEvents}</Tabs.Tab>
          <Tabs.Tab value="llm">{t.llmProviders}</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="users" pt="sm">
          <Users />
        </Tabs.Panel>
        <Tabs.Panel value="roles" pt="sm">
          <Roles />
        </Tabs.Panel>
        <Tabs.Panel value="groups" pt="sm">
          <Groups />
        </Tabs.Panel>
        <Tabs.Panel value="keys" pt="sm">
          <ApiKeys />
        </Tabs.Panel>
        <Tabs.Panel value="events" pt="sm">
          <Events />
        </Tabs.Panel>
        <Tabs.Panel value="llm" pt="sm">
          <LlmProviders />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function useRoles() {
  return useQuery({ queryKey: ['roles'], queryFn: () => must(api.GET('/api/admin/roles')) });
}

function Users() {
  const { t } = useI18n();
  const qc = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => must(api.GET('/api/admin/users')) });
  const roles = useRoles();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/admin/users', { body: { username, password, roles: picked } })),
    onSuccess: () => {
      setUsername('');
      setPassword('');
      return qc.invalidateQueries({ queryKey: ['users'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => must(api.DELETE('/api/admin/users/{user_id}', { params: { path: { user_id: id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['users'] }),
  });
  const list = users.data?.items ?? [];
  return (
    <Stack>
      <ProblemAlert error={users.error ?? create.error ?? remove.error} />
      <Table striped>
        <Table.Tbody>
          {list.map((u) => (
            <Table.Tr key={u.id}>
              <Table.Td>{u.username}</Table.Td>
              <Table.Td>
                {u.roles.map((r) => (
                  <Badge key={r} mr={4}>
                    {r}
                  </Badge>
                ))}
              </Table.Td>
              <Table.Td>{u.auth_source}</Table.Td>
              <Table.Td>
                <Button size="compact-xs" color="red" variant="subtle" onClick={() => remove.mutate(u.id)} aria-label={t.delete}>
                  ✕
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Group align="end">
        <TextInput label={t.username} value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
        <PasswordInput label={t.password} value={password} onChange={(e) => setPassword(e.currentTarget.value)} w={200} />
        <MultiSelect label={t.roles} data={(roles.data?.items ?? []).map((r) => r.name)} value={picked} onChange={setPicked} w={260} />
        <Button onClick={() => create.mutate()} disabled={!username || password.length < 12}>
          {t.add}
        </Button>
      </Group>
    </Stack>
  );
}

function Roles() {
  const roles = useRoles();
  return (
    <Stack>
      <ProblemAlert error={roles.error} />
      <Table striped>
        <Table.Tbody>
          {roles.data?.items.map((r) => (
            <Table.Tr key={r.id}>
              <Table.Td fw={600}>{r.name}</Table.Td>
              <Table.Td>{r.description}</Table.Td>
              <Table.Td>
                <Text size="xs">{r.permissions.join(', ')}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function Groups() {
  const { t } = useI18n();
  const qc = useQueryClient();
  const roles = useRoles();
  const groups = useQuery({ queryKey: ['group-mappings'], queryFn: () => must(api.GET('/api/admin/group-mappings')) });
  const [group, setGroup] = useState('');
  const [role, setRole] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/admin/group-mappings', { body: { group_name: group, role_id: role! } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['group-mappings'] }),
  });
  const rows = (groups.data as unknown as { items?: Array<Record<string, string>> } | undefined)?.items ?? [];
  return (
    <Stack>
      <ProblemAlert error={groups.error ?? create.error} />
      <Code block>{JSON.stringify(rows, null, 2)}</Code>
      <Group align="end">
        <TextInput label={t.group} value={group} onChange={(e) => setGroup(e.currentTarget.value)} />
        <Select
          label={t.role}
          data={(roles.data?.items ?? []).map((r) => ({ value: r.id, label: r.name }))}
          value={role}
          onChange={setRole}
          w={220}
        />
        <Button disabled={!group || !role} onClick={() => create.mutate()} aria-label={t.addGroupMapping}>
          +
        </Button>
      </Group>
    </Stack>
  );
}

function ApiKeys() {
  const { t } = useI18n();
  const qc = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: () => must(api.GET('/api/admin/api-keys')) });
  const [name, setName] = useState('');
  const [perms, setPerms] = useState<string[]>([]);
  const perm = useQuery({ queryKey: ['permissions'], queryFn: () => must(api.GET('/api/admin/permissions')) });
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/admin/api-keys', { body: { name, permissions: perms as never } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => must(api.DELETE('/api/admin/api-keys/{id}', { params: { path: { id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const raw = create.data?.raw_key;
  const permNames = (perm.data?.items ?? []).map((p) => p.name);
  return (
    <Stack>
      <ProblemAlert error={keys.error ?? create.error ?? revoke.error} />
      {raw && <RawKeyAlert raw={raw} />}
      <Table striped>
        <Table.Tbody>
          {keys.data?.items.map((k) => (
            <Table.Tr key={k.id}>
              <Table.Td>{k.name}</Table.Td>
              <Table.Td>
                <Code>{k.key_prefix}…</Code>
              </Table.Td>
              <Table.Td>
                <Text size="xs">{k.permissions.join(', ')}</Text>
              </Table.Td>
              <Table.Td>
                {k.active ? (
                  <Button size="compact-xs" color="red" variant="subtle" onClick={() => revoke.mutate(k.id)}>
                    {t.revoke}
                  </Button>
                ) : (
                  <Badge color="gray">{t.revoked}</Badge>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Group align="end">
        <TextInput label={t.name} value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <MultiSelect label={t.permissions} data={permNames} value={perms} onChange={setPerms} w={360} searchable />
        <Button onClick={() => create.mutate()} disabled={!name}>
          {t.add}
        </Button>
      </Group>
    </Stack>
  );
}

/** A new key's secret, shown once right after it is made. */
function RawKeyAlert({ raw }: { raw: string }) {
  const { t } = useI18n();
  return (
    <Alert color="yellow" title={t.keyShownOnce}>
      <Group>
        <Code data-testid="raw-key">{raw}</Code>
        <CopyButton value={raw}>
          {({ copied, copy }) => (
            <Button size="compact-xs" onClick={copy}>
              {copied ? '✓' : t.copy}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Alert>
  );
}

function Events() {
  const { t } = useI18n();
  const events = useQuery({
    queryKey: ['security-events'],
    queryFn: () => must(api.GET('/api/admin/security-events', { params: { query: { page_size: 100 } } })),
  });
  return (
    <Stack>
      <ProblemAlert error={events.error} />
      <Table striped>
        <Table.Tbody>
          {events.data?.items.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td>{t.dateTime(e.ts)}</Table.Td>
              <Table.Td>{e.event_type}</Table.Td>
              <Table.Td>{JSON.stringify((e as unknown as { actor?: unknown }).actor ?? '')}</Table.Td>
              <Table.Td>{(e as unknown as { outcome?: string }).outcome}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function LlmProviders() {
  const { t } = useI18n();
  const providers = useQuery({ queryKey: ['llm-providers'], queryFn: () => must(api.GET('/api/admin/llm-providers')) });
  const test = useMutation({
    mutationFn: (id: string) => must(api.POST('/api/admin/llm-providers/{provider_id}/test', { params: { path: { provider_id: id } } })),
  });
  return (
    <Stack>
      <ProblemAlert error={providers.error ?? test.error} />
      <Table striped>
        <Table.Tbody>
          {providers.data?.items.map((p) => (
            <Table.Tr key={p.id}>
              <Table.Td>{p.name}</Table.Td>
              <Table.Td>{(p as unknown as { base_url?: string }).base_url}</Table.Td>
              <Table.Td>{(p as unknown as { model?: string }).model}</Table.Td>
              <Table.Td>
                <Button size="compact-xs" variant="light" onClick={() => test.mutate(p.id)}>
                  {t.testProvider}
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {test.data && <Code block>{JSON.stringify(test.data, null, 2)}</Code>}
    </Stack>
  );
}
