/** Who is signed in and what they may do: from `GET /api/auth/me`, the server's own answer. */
import { useQuery } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { api, must, session } from './api.ts';

export function useToken(): string | undefined {
  return useSyncExternalStore(session.subscribe, () => session.token);
}

export function useMe() {
  const token = useToken();
  return useQuery({ queryKey: ['me', token], enabled: !!token, queryFn: () => must(api.GET('/api/auth/me')) });
}

/** `can('dashboards:MIGRATE')`: Admin holds everything without listing it. */
export function useCan(): (permission: string) => boolean {
  const me = useMe().data;
  return (p) => !!me && (me.roles.includes('Admin') || me.permissions.includes(p));
}
