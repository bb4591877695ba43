import { DurableError } from './durable.error';

/**
 * A run with this id exists already, for another workflow; or (with `message`) a run of another
 * workflow holds the deduplication id a start gave.
 */
export class RunConflictError extends DurableError {
  readonly code = 'RUN_CONFLICT';
  constructor(
    readonly runId: string,
    existingWorkflow: string,
    requestedWorkflow: string,
    message = `Run "${runId}" already exists for workflow "${existingWorkflow}", not "${requestedWorkflow}". ` +
      'Use another runId, or start the same workflow to get the existing run back.',
  ) {
    super(message, { existingWorkflow, requestedWorkflow });
  }
}
