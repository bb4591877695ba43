import { QueryClient } from '@tanstack/react-query';
import { isApiError } from '../api/client';

// A 4xx will not change by asking again (and a 401 already sent the operator to the login page);
// network errors and 5xx get two more tries.
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failures, error) => !(isApiError(error) && error.status >= 400 && error.status < 500) && failures < 2,
        staleTime: 1_000,
      },
      mutations: { retry: false },
    },
  });
}
