import { Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../api.ts';

export function useEnvironments() {
  return useQuery({
    queryKey: ['environments'],
    queryFn: () => must(api.GET('/api/environments', { params: { query: { page_size: 100 } } })),
  });
}

export function EnvSelect(props: { label: string; value: string | null; onChange(v: string | null): void; exclude?: string | null }) {
  const envs = useEnvironments().data?.items ?? [];
  return (
    <Select
      label={props.label}
      aria-label={props.label}
      data={envs.filter((e) => e.id !== props.exclude).map((e) => ({ value: e.id, label: e.name }))}
      value={props.value}
      onChange={props.onChange}
      searchable
      w={260}
    />
  );
}
