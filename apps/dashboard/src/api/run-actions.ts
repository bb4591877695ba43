import { useMutation } from '@tanstack/react-query';
import { apiPost, runPath } from './client';
import { useInvalidateRuns } from './invalidate';
import type { DeadlineResult, ForkBody, ForkResult, MessageDelivery, ResumeResult, SignalDelivery, TransitionResult } from './types';

// Operator actions on one run. Each settles by invalidating runs and stats, also on failure:
// a 409 usually means the page was stale.

export interface DeliverSignalInput {
  runId: string;
  name: string;
  payload: unknown;
}

export function deliverSignal({ runId, name, payload }: DeliverSignalInput): Promise<SignalDelivery> {
  return apiPost<SignalDelivery>(`${runPath(runId)}/signals/${encodeURIComponent(name)}`, { payload });
}

export interface SendMessageInput {
  runId: string;
  channel: string;
  key: string;
  payload: unknown;
}

export function sendMessage({ runId, channel, key, payload }: SendMessageInput): Promise<MessageDelivery> {
  return apiPost<MessageDelivery>(`${runPath(runId)}/channels/${encodeURIComponent(channel)}`, { key, payload });
}

export function resumeRun(runId: string): Promise<ResumeResult> {
  return apiPost<ResumeResult>(`${runPath(runId)}/resume`);
}

export function cancelRun({ runId, reason }: { runId: string; reason?: string }): Promise<TransitionResult> {
  return apiPost<TransitionResult>(`${runPath(runId)}/cancel`, reason ? { reason } : {});
}

export function retryRun(runId: string): Promise<TransitionResult> {
  return apiPost<TransitionResult>(`${runPath(runId)}/retry`);
}

/** Sets (an ISO instant) or clears (null) the run's deadline; inheriting children follow it. */
export function setDeadline({ runId, deadline }: { runId: string; deadline: string | null }): Promise<DeadlineResult> {
  return apiPost<DeadlineResult>(`${runPath(runId)}/deadline`, { deadline });
}

/** A new run that runs again from `fromStep`; the source is untouched, but for a `forked` history row. */
export function forkRun({ runId, ...body }: ForkBody & { runId: string }): Promise<ForkResult> {
  return apiPost<ForkResult>(`${runPath(runId)}/fork`, body);
}

export function useDeliverSignal() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: deliverSignal, onSettled: invalidate });
}

export function useSendMessage() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: sendMessage, onSettled: invalidate });
}

export function useResumeRun() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: resumeRun, onSettled: invalidate });
}

export function useCancelRun() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: cancelRun, onSettled: invalidate });
}

export function useRetryRun() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: retryRun, onSettled: invalidate });
}

export function useSetDeadline() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: setDeadline, onSettled: invalidate });
}

export function useForkRun() {
  const invalidate = useInvalidateRuns();
  return useMutation({ mutationFn: forkRun, onSettled: invalidate });
}
