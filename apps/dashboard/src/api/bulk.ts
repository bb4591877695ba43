import { useMutation } from '@tanstack/react-query';
import { apiPost } from './client';
import { useInvalidateRuns } from './invalidate';
import type { BulkFilter, BulkResult } from './types';

// Bulk actions by explicit run ids (the selection) or by a filter's matches (at most 1,000: the
// dialogs refuse more before sending); each run's outcome comes back on its own.

/** The server's cap on the runs one bulk action reaches (docs/rest-api.md). */
export const BULK_LIMIT = 1_000;

export type BulkTarget = { runIds: string[] } | { filter: BulkFilter };

export type BulkAction = BulkTarget &
  ({ action: 'signal'; name: string; payload: unknown } | { action: 'resume' } | { action: 'cancel'; reason?: string });

export function runBulk(request: BulkAction): Promise<BulkResult> {
  const { action, ...body } = request;
  return apiPost<BulkResult>(`/bulk/${action}`, body);
}

export function useBulkAction() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: runBulk, onSettled: invalidate });
}
