import { keepPreviousData, queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { serverNow } from '../lib/clock';
import { isClosed } from '../lib/run-status';
import { apiGet, apiPost, isApiError, runPath } from './client';
import { useInvalidateRuns } from './invalidate';
import { FALLBACK_POLL_MS, useLiveRefresh } from './live';
import { queryKeys } from './query-keys';
import type { RunDetail, RunFilter, RunList, RunSort, StartRunBody, StartRunResult } from './types';

/** A range ending now ("the last hour"): turned into an instant each time the list is fetched. */
export interface RecentRange {
  field: RunSort;
  ms: number;
}

/** The runs list's query: the API's filter, and maybe a range relative to now. */
export type RunQuery = RunFilter & { recent?: RecentRange };

/** The filter as the API takes it: a recent range becomes `createdAfter` or `updatedAfter`, from the server's clock. */
export function resolveRunQuery({ recent, ...filter }: RunQuery, now = serverNow()): RunFilter {
  if (!recent) return filter;
  return { ...filter, [`${recent.field}After`]: new Date(now - recent.ms).toISOString() };
}

export function fetchRuns(query: RunQuery, signal?: AbortSignal): Promise<RunList> {
  const { keys = {}, ...filter } = resolveRunQuery(query);
  const keyParams = Object.fromEntries(Object.entries(keys).map(([name, value]) => [`key.${name}`, value]));
  return apiGet<RunList>('/runs', { ...filter, ...keyParams }, signal);
}

export function runsQueryOptions(query: RunQuery) {
  return queryOptions({
    queryKey: queryKeys.runs.list(query),
    queryFn: ({ signal }) => fetchRuns(query, signal),
    refetchInterval: FALLBACK_POLL_MS,
    placeholderData: keepPreviousData, // a filter change keeps the old rows until the new ones arrive
  });
}

/** The runs list: refreshed by live updates, polled only while they are down (api/live.ts). */
export function useRuns(query: RunQuery) {
  return useQuery({ ...runsQueryOptions(query), ...useLiveRefresh() });
}

/**
 * A filter's matches read once, neither polled nor refreshed by live updates: a bulk action's targets,
 * shown as they were when the operator confirmed them.
 */
export function useRunsPreview(filter: RunFilter, enabled = true) {
  return useQuery({
    queryKey: queryKeys.bulkPreview(filter),
    queryFn: ({ signal }) => fetchRuns(filter, signal),
    enabled,
    staleTime: Infinity,
    gcTime: 0, // read again at the next opening
    refetchOnWindowFocus: false,
  });
}

export function fetchRun(runId: string, signal?: AbortSignal): Promise<RunDetail> {
  return apiGet<RunDetail>(runPath(runId), undefined, signal);
}

export function runQueryOptions(runId: string, pollMs: number | false = FALLBACK_POLL_MS) {
  return queryOptions({
    queryKey: queryKeys.runs.detail(runId),
    queryFn: ({ signal }) => fetchRun(runId, signal),
    // A finished run no longer changes by itself (retry and cancel invalidate it), nor does a missing one.
    refetchInterval: (query) => {
      const { data, error } = query.state;
      if (isApiError(error) && error.status === 404) return false;
      return data && isClosed(data.run.status) ? false : pollMs;
    },
  });
}

/** A run's page: refreshed by live updates when the run or a child changes, polled only while they are down. */
export function useRun(runId: string) {
  const { refetchInterval, refetchOnWindowFocus } = useLiveRefresh();
  return useQuery({ ...runQueryOptions(runId, refetchInterval), refetchOnWindowFocus });
}

export function startRun(body: StartRunBody): Promise<StartRunResult> {
  return apiPost<StartRunResult>('/runs', body);
}

export function useStartRun() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: startRun, onSettled: invalidate });
}
