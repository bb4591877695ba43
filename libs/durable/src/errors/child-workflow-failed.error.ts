import { DurableError } from './durable.error';

/** A child run ended failed or cancelled; `childError` is what it ended with. */
export class ChildWorkflowFailedError extends DurableError {
  readonly code = 'CHILD_WORKFLOW_FAILED';
  constructor(
    readonly childRunId: string,
    readonly childStatus: 'failed' | 'cancelled',
    readonly childError: { name: string; message: string },
  ) {
    super(`Child run "${childRunId}" ${childStatus}: ${childError.name}: ${childError.message}`, {
      childRunId,
      childStatus,
      childError,
    });
  }
}
