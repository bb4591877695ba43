import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { useLiveRefresh } from './live';
import { queryKeys } from './query-keys';

/** The overview's two windows: the last hour (1-minute buckets) and the last day (15-minute buckets). */
export type ActivityRange = '1h' | '24h';
export const ACTIVITY_RANGES: readonly ActivityRange[] = ['1h', '24h'];

/** Runs started, completed, failed and parked (waits begun) in one bucket, from the history. */
export interface ActivityBucket {
  /** The bucket's start, ISO 8601. */
  at: string;
  started: number;
  completed: number;
  failed: number;
  parked: number;
}

/** GET /activity?range=: the buckets of the range, oldest first; the last one is still filling. */
export interface Activity {
  range: ActivityRange;
  bucketMs: number;
  buckets: ActivityBucket[];
}

// Beside the stats' key (query-keys.ts spells the others; this one lives with its endpoint).
const activityKey = (range: ActivityRange) => [...queryKeys.stats, 'activity', range] as const;

export function fetchActivity(range: ActivityRange, signal?: AbortSignal): Promise<Activity> {
  return apiGet<Activity>('/activity', { range }, signal);
}

export function activityQueryOptions(range: ActivityRange) {
  return queryOptions({
    queryKey: activityKey(range),
    queryFn: ({ signal }) => fetchActivity(range, signal),
    placeholderData: keepPreviousData,
  });
}

export function useActivity(range: ActivityRange) {
  // A bucket of the hour fills in a minute, one of the day in fifteen: no need to ask every 2 s.
  const every = range === '1h' ? 10_000 : 60_000;
  return useQuery({ ...activityQueryOptions(range), ...useLiveRefresh(every, every) });
}
