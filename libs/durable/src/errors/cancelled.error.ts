import { DurableError } from './durable.error';

/** The run was cancelled; `result()` rejects with this. */
export class CancelledError extends DurableError {
  readonly code = 'CANCELLED';
  constructor(
    readonly runId: string,
    readonly reason?: string,
  ) {
    super(`Run "${runId}" was cancelled${reason ? `: ${reason}` : ''}.`);
  }
}
