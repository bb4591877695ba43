import type { RunStatus } from '../api/types';

/** Nothing happens to these runs by themselves: no polling, no signals for completed/cancelled. */
export function isClosed(status: RunStatus): boolean {
  return status === 'completed' || status === 'cancelled' || status === 'failed';
}

// What the server allows for each status (docs/API.md section 4); the UI only offers those.
export const canResume = (status: RunStatus) => status === 'waiting';
export const canCancel = (status: RunStatus) => status !== 'completed' && status !== 'cancelled';
export const canRetry = (status: RunStatus) => status === 'failed';
/** Whether the run's deadline still governs it, so can be moved: a failed run's too, a retry runs under it. */
export const deadlineCounts = (status: RunStatus) => status !== 'completed' && status !== 'cancelled';
export const acceptsDeliveries = (status: RunStatus) => status !== 'completed' && status !== 'cancelled';
