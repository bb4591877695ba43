import { keepPreviousData, queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { isClosed } from '../lib/run-status';
import { apiGet, apiPost, isApiError, runPath } from './client';
import { useInvalidateRuns } from './invalidate';
import { queryKeys } from './query-keys';
import type { RunDetail, RunFilter, RunList, StartRunBody, StartRunResult } from './types';

const POLL_MS = 2_000;

export function fetchRuns({ keys = {}, ...filter }: RunFilter, signal?: AbortSignal): Promise<RunList> {
  const keyParams = Object.fromEntries(Object.entries(keys).map(([name, value]) => [`key.${name}`, value]));
  return apiGet<RunList>('/runs', { ...filter, ...keyParams }, signal);
}

export function runsQueryOptions(filter: RunFilter) {
  return queryOptions({
    queryKey: queryKeys.runs.list(filter),
    queryFn: ({ signal }) => fetchRuns(filter, signal),
    refetchInterval: POLL_MS,
    placeholderData: keepPreviousData, // a filter change keeps the old rows until the new ones arrive
  });
}

export function useRuns(filter: RunFilter) {
  return useQuery(runsQueryOptions(filter));
}

/** A filter's matches read once, not polled: a bulk action's targets, shown as they were when confirmed. */
export function useRunsPreview(filter: RunFilter) {
  return useQuery({ ...runsQueryOptions(filter), refetchInterval: false });
}

export function fetchRun(runId: string, signal?: AbortSignal): Promise<RunDetail> {
  return apiGet<RunDetail>(runPath(runId), undefined, signal);
}

export function runQueryOptions(runId: string) {
  return queryOptions({
    queryKey: queryKeys.runs.detail(runId),
    queryFn: ({ signal }) => fetchRun(runId, signal),
    // A finished run no longer changes by itself (retry and cancel invalidate it), nor does a missing one.
    refetchInterval: (query) => {
      const { data, error } = query.state;
      if (isApiError(error) && error.status === 404) return false;
      return data && isClosed(data.run.status) ? false : POLL_MS;
    },
  });
}

export function useRun(runId: string) {
  return useQuery(runQueryOptions(runId));
}

export function startRun(body: StartRunBody): Promise<StartRunResult> {
  return apiPost<StartRunResult>('/runs', body);
}

export function useStartRun() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: startRun, onSettled: invalidate });
}
