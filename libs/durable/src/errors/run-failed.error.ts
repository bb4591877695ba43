import { DurableError } from './durable.error';

/** The run failed; carries the `name` and `message` of the error it failed with. */
export class RunFailedError extends DurableError {
  readonly code = 'RUN_FAILED';
  constructor(
    readonly runId: string,
    readonly error: { name: string; message: string },
  ) {
    super(`Run "${runId}" failed: ${error.name}: ${error.message}`, { error });
  }
}
