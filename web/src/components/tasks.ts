import { useQuery } from '@tanstack/react-query';
import { api, must } from '../api.ts';

export const FINISHED = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** A task, polled every second until it finishes (the live logs page also follows its stream). */
export function useTask(id: string | undefined) {
  return useQuery({
    queryKey: ['task', id],
    enabled: !!id,
    queryFn: () => must(api.GET('/api/tasks/{task_id}', { params: { path: { task_id: id! } } })),
    refetchInterval: (q) => (q.state.data && FINISHED.includes(q.state.data.status) ? false : 1000),
  });
}

export const STATUS_COLOR: Record<string, string> = {
  PENDING: 'gray',
  RUNNING: 'blue',
  SUCCEEDED: 'green',
  FAILED: 'red',
  CANCELLED: 'yellow',
  AWAITING_APPROVAL: 'grape',
};
