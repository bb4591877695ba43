import { DurableError } from './durable.error';

/** The run is completed or cancelled: it takes no more signals or messages. */
export class RunClosedError extends DurableError {
  readonly code = 'RUN_CLOSED';
  constructor(
    readonly runId: string,
    readonly status: string,
  ) {
    super(`Run "${runId}" is ${status} and accepts no more signals or messages; nothing was recorded.`);
  }
}
