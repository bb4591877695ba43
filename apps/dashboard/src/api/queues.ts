import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { useLiveRefresh } from './live';
import { queryKeys } from './query-keys';
import type { Queue } from './types';

// A queue's load changes by the second: polled, like the overview.
const POLL_MS = 3_000;

const queuesQuery = {
  queryKey: queryKeys.queues,
  queryFn: async ({ signal }: { signal: AbortSignal }) => (await apiGet<{ queues: Queue[] }>('/queues', undefined, signal)).queues,
};

export function useQueues() {
  return useQuery({ ...queuesQuery, ...useLiveRefresh(POLL_MS, POLL_MS), placeholderData: keepPreviousData });
}

/** The declared queues' names (a filter's choices): read, not polled, as the module declares them at boot. */
export function useQueueNames(): string[] {
  return useQuery(queuesQuery).data?.map((queue) => queue.name) ?? [];
}
