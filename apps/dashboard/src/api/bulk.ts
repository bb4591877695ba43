import { useMutation } from '@tanstack/react-query';
import { apiPost } from './client';
import { useInvalidateRuns } from './invalidate';
import type { BulkResult } from './types';

// Bulk actions by explicit run ids (the selection); each run's outcome comes back on its own.

export type BulkAction =
  | { action: 'signal'; runIds: string[]; name: string; payload: unknown }
  | { action: 'resume'; runIds: string[] }
  | { action: 'cancel'; runIds: string[]; reason?: string };

export function runBulk(request: BulkAction): Promise<BulkResult> {
  const { action, ...body } = request;
  return apiPost<BulkResult>(`/bulk/${action}`, body);
}

export function useBulkAction() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: runBulk, onSettled: invalidate });
}
