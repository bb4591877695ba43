import { DurableError } from './durable.error';

/** The run's status does not allow the operation (for example, retrying a completed run). */
export class InvalidTransitionError extends DurableError {
  readonly code = 'INVALID_TRANSITION';
  constructor(
    readonly runId: string,
    action: string,
    status: string,
    allowed: string[],
  ) {
    super(`Cannot ${action} run "${runId}": it is ${status}; ${action} applies to ${allowed.join(' or ')} runs.`, {
      action,
      status,
      allowed,
    });
  }
}
