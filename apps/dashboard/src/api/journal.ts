import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { useLiveRefresh } from './live';
import { queryKeys } from './query-keys';
import type { JournalDays } from './types';

// Days change at retention's pace (a minute by default): polled slowly.
const POLL_MS = 30_000;

export function useJournalDays() {
  return useQuery({
    queryKey: queryKeys.journal,
    queryFn: ({ signal }) => apiGet<JournalDays>('/journal', undefined, signal),
    ...useLiveRefresh(POLL_MS, POLL_MS),
    placeholderData: keepPreviousData,
  });
}
