import { DurableError } from './durable.error';

/** No run has this id. */
export class RunNotFoundError extends DurableError {
  readonly code = 'RUN_NOT_FOUND';
  constructor(readonly runId: string) {
    super(`No run with id "${runId}". Check the id, or list runs with WorkflowClient.listRuns().`);
  }
}
