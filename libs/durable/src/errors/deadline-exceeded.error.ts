import { DurableError } from './durable.error';

/**
 * The run's deadline passed: thrown by the durable call the run was awaiting then (catch it to run
 * cleanup within the deadline's grace), and the run's error when it is failed at the grace's end, or
 * when its deadline passed before it began (while it waited in its queue, for a worker, or for its
 * delayed start). Never retried.
 */
export class DeadlineExceededError extends DurableError {
  readonly code = 'DEADLINE_EXCEEDED';
  constructor(
    readonly runId: string,
    readonly deadline: Date,
    message = `Run "${runId}" passed its deadline (${deadline.toISOString()}).`,
  ) {
    super(message, { deadline: deadline.toISOString() });
  }
}
