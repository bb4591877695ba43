import type { RunStatus } from '../api/types';

/** Nothing happens to these runs by themselves: no polling, no signals for completed/cancelled. */
export function isClosed(status: RunStatus): boolean {
  return status === 'completed' || status === 'cancelled' || status === 'failed';
}

// What the server allows for each status (docs/API.md section 4); the UI only offers those.
export const canResume = (status: RunStatus) => status === 'waiting';
export const canCancel = (status: RunStatus) => status !== 'completed' && status !== 'cancelled';
export const canRetry = (status: RunStatus) => status === 'failed';
/** The server refuses a retry while the run's deadline has passed (it would meet it at once): moved or cleared first. */
export const retryNeedsDeadline = (run: { status: RunStatus; deadline?: string }, now: number) =>
  canRetry(run.status) && run.deadline !== undefined && Date.parse(run.deadline) <= now;
/** Whether cancelling the parent cancels this child too: an unfinished child it started and did not detach (not a fork's reused one). */
export const cancelReaches = (child: { status: RunStatus; detached?: true; reusedFrom: string | null }) =>
  !child.reusedFrom && !child.detached && (child.status === 'pending' || child.status === 'running' || child.status === 'waiting');
/** Whether the run's deadline still governs it, so can be moved: a failed run's too, a retry runs under it. */
export const deadlineCounts = (status: RunStatus) => status !== 'completed' && status !== 'cancelled';
export const acceptsDeliveries = (status: RunStatus) => status !== 'completed' && status !== 'cancelled';
