import { DurableError } from './durable.error';

/** `RunHandle.result({ timeout })` gave up waiting; the run itself goes on. */
export class ResultTimeoutError extends DurableError {
  readonly code = 'RESULT_TIMEOUT';
  constructor(
    readonly runId: string,
    timeoutMs: number,
    status: string,
  ) {
    super(`Run "${runId}" did not end within ${timeoutMs} ms (it is ${status}); the run goes on, wait again or look it up later.`);
  }
}
