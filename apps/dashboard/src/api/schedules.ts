import { keepPreviousData, queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { apiGet, apiPost, isApiError } from './client';
import { useInvalidateSchedules } from './invalidate';
import { useLiveRefresh } from './live';
import { queryKeys } from './query-keys';
import type { BackfillBody, BackfillPreview, BackfillResult, Schedule, ScheduleDetail } from './types';

// Schedules change by themselves (each slot moves the next fire times and the last run): polled.
const POLL_MS = 5_000;

/** Path of one schedule; names are free-form strings, hence the encoding. */
function schedulePath(name: string): string {
  return `/schedules/${encodeURIComponent(name)}`;
}

export async function fetchSchedules(signal?: AbortSignal): Promise<Schedule[]> {
  const { schedules } = await apiGet<{ schedules: Schedule[] }>('/schedules', undefined, signal);
  return schedules;
}

export function schedulesQueryOptions() {
  return queryOptions({
    queryKey: queryKeys.schedules.list,
    queryFn: ({ signal }) => fetchSchedules(signal),
    placeholderData: keepPreviousData,
  });
}

export function useSchedules() {
  return useQuery({ ...schedulesQueryOptions(), ...useLiveRefresh(POLL_MS, POLL_MS) });
}

export function fetchSchedule(name: string, signal?: AbortSignal): Promise<ScheduleDetail> {
  return apiGet<ScheduleDetail>(schedulePath(name), undefined, signal);
}

/** One schedule, refreshed every `every` ms (false: not by time) until it reads as not found. */
export function scheduleQueryOptions(name: string, every: number | false) {
  return queryOptions({
    queryKey: queryKeys.schedules.detail(name),
    queryFn: ({ signal }) => fetchSchedule(name, signal),
    refetchInterval: (query) => (isApiError(query.state.error) && query.state.error.status === 404 ? false : every),
  });
}

export function useSchedule(name: string) {
  const { refetchInterval, refetchOnWindowFocus } = useLiveRefresh(POLL_MS, POLL_MS);
  return useQuery({ ...scheduleQueryOptions(name, refetchInterval), refetchOnWindowFocus });
}

export function pauseSchedule(name: string): Promise<unknown> {
  return apiPost<unknown>(`${schedulePath(name)}/pause`);
}

export function resumeSchedule(name: string): Promise<unknown> {
  return apiPost<unknown>(`${schedulePath(name)}/resume`);
}

/**
 * One run now. An override (`overlap`) names the unfinished run it is meant for (`expectLastRun`): when
 * another has become the last run meanwhile, the server refuses, naming that one, and changes nothing.
 */
export function triggerSchedule({
  name,
  ...override
}: {
  name: string;
  overlap?: 'allow' | 'cancelOther';
  expectLastRun?: string;
}): Promise<{ runId: string }> {
  return apiPost<{ runId: string }>(`${schedulePath(name)}/trigger`, override.overlap ? override : undefined);
}

/** Starts a run for each slot of the range that has none; with `dryRun`, only counts them (and names the range's slots). */
export function backfillSchedule<T extends BackfillResult = BackfillResult>({
  name,
  ...body
}: BackfillBody & { name: string }): Promise<T> {
  return apiPost<T>(`${schedulePath(name)}/backfill`, body);
}

export function usePauseSchedule() {
  const invalidate = useInvalidateSchedules();
  return useMutation({ mutationFn: pauseSchedule, onSettled: invalidate });
}

export function useResumeSchedule() {
  const invalidate = useInvalidateSchedules();
  return useMutation({ mutationFn: resumeSchedule, onSettled: invalidate });
}

export function useTriggerSchedule() {
  const invalidate = useInvalidateSchedules();
  return useMutation({ mutationFn: triggerSchedule, onSettled: invalidate });
}

/** The preview changes nothing, so it invalidates nothing. */
export function usePreviewBackfill() {
  return useMutation({
    mutationFn: (input: Omit<BackfillBody, 'dryRun'> & { name: string }) => backfillSchedule<BackfillPreview>({ ...input, dryRun: true }),
  });
}

export function useBackfillSchedule() {
  const invalidate = useInvalidateSchedules();
  return useMutation({
    mutationFn: (input: Omit<BackfillBody, 'dryRun'> & { name: string }) => backfillSchedule(input),
    onSettled: invalidate,
  });
}
