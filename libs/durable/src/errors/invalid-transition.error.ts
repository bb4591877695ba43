import { DurableError } from './durable.error';

/**
 * The run's status does not allow the operation (for example, retrying a completed run), or `because`
 * another run stands in its way (a failed run's deduplication id, held by a newer run of its queue).
 */
export class InvalidTransitionError extends DurableError {
  readonly code = 'INVALID_TRANSITION';
  constructor(
    readonly runId: string,
    action: string,
    status: string,
    allowed: string[],
    because?: string,
  ) {
    super(
      because
        ? `Cannot ${action} run "${runId}": ${because}.`
        : `Cannot ${action} run "${runId}": it is ${status}; ${action} applies to ${allowed.join(' or ')} runs.`,
      { action, status, allowed, ...(because ? { because } : {}) },
    );
  }
}
