import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { useLiveRefresh } from './live';
import { queryKeys } from './query-keys';
import type { Queues } from './types';

// A queue's load changes by the second: polled, like the overview.
const POLL_MS = 3_000;

const queuesQuery = {
  queryKey: queryKeys.queues,
  queryFn: ({ signal }: { signal: AbortSignal }) => apiGet<Queues>('/queues', undefined, signal),
};

export function useQueues() {
  return useQuery({ ...queuesQuery, ...useLiveRefresh(POLL_MS, POLL_MS), placeholderData: keepPreviousData });
}

/** The queues' names (a filter's choices), the undeclared ones holding runs after: read, not polled. */
export function useQueueNames(): string[] {
  const data = useQuery(queuesQuery).data;
  return data ? [...data.queues, ...data.undeclared].map((queue) => queue.name) : [];
}
