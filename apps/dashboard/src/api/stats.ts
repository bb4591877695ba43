import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { queryKeys } from './query-keys';
import type { Stats } from './types';

export function fetchStats(signal?: AbortSignal): Promise<Stats> {
  return apiGet<Stats>('/stats', undefined, signal);
}

export function statsQueryOptions() {
  return queryOptions({
    queryKey: queryKeys.stats,
    queryFn: ({ signal }) => fetchStats(signal),
    refetchInterval: 2_000,
    placeholderData: keepPreviousData,
  });
}

export function useStats() {
  return useQuery(statsQueryOptions());
}
