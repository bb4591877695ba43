import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { queryKeys } from './query-keys';
import type { Session } from './types';

export function fetchSession(signal?: AbortSignal): Promise<Session> {
  return apiGet<Session>('/session', undefined, signal);
}

/** Keyed by the auth epoch: a new or cleared token asks again. */
export function sessionQueryOptions(authEpoch: number) {
  return queryOptions({
    queryKey: queryKeys.session(authEpoch),
    queryFn: ({ signal }) => fetchSession(signal),
    staleTime: Infinity,
    retry: false,
  });
}

export function useSessionQuery(authEpoch: number) {
  return useQuery(sessionQueryOptions(authEpoch));
}
