import { useQueryClient } from '@tanstack/react-query';
import { queryKeys } from './query-keys';

/**
 * What every run mutation changes: the runs (lists and details) and the stats. Returned as a promise
 * so a mutation stays pending until the fresh data is in, and buttons don't flash a stale state.
 */
export function useInvalidateRuns(): () => Promise<unknown> {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: queryKeys.runs.all }),
      queryClient.invalidateQueries({ queryKey: queryKeys.stats }),
    ]);
}

/** What every schedule action changes: the schedules, and the runs they start (trigger, backfill). */
export function useInvalidateSchedules(): () => Promise<unknown> {
  const queryClient = useQueryClient();
  const invalidateRuns = useInvalidateRuns();
  return () => Promise.all([queryClient.invalidateQueries({ queryKey: queryKeys.schedules.all }), invalidateRuns()]);
}
