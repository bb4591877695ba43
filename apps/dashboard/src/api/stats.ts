import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { FALLBACK_POLL_MS, useLiveRefresh } from './live';
import { queryKeys } from './query-keys';
import type { Stats } from './types';

export function fetchStats(signal?: AbortSignal): Promise<Stats> {
  return apiGet<Stats>('/stats', undefined, signal);
}

export function statsQueryOptions() {
  return queryOptions({
    queryKey: queryKeys.stats,
    queryFn: ({ signal }) => fetchStats(signal),
    refetchInterval: FALLBACK_POLL_MS,
    placeholderData: keepPreviousData,
  });
}

/** Instances' heartbeats and overdue wakes change with no run changing: asked for now and then while live. */
const LIVE_STATS_MS = 10_000;

/** The overview's figures: refreshed by live updates when runs change (api/live.ts), polled every 2 s while they are down. */
export function useStats() {
  return useQuery({ ...statsQueryOptions(), ...useLiveRefresh(LIVE_STATS_MS) });
}
