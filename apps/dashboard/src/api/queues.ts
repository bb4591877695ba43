import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { queryKeys } from './query-keys';
import type { Queue } from './types';

// A queue's load changes by the second: polled, like the overview.
const POLL_MS = 3_000;

export function useQueues() {
  return useQuery({
    queryKey: queryKeys.queues,
    queryFn: async ({ signal }) => (await apiGet<{ queues: Queue[] }>('/queues', undefined, signal)).queues,
    refetchInterval: POLL_MS,
    placeholderData: keepPreviousData,
  });
}
