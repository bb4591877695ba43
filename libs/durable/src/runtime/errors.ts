import {
  ChildWorkflowFailedError,
  DeadlineExceededError,
  DurableError,
  InvalidArgumentError,
  InvalidPayloadError,
  NonRetryableError,
  RunConflictError,
  StepResultMismatchError,
  UnknownSignalError,
  WorkflowNotFoundError,
} from '../errors';
import type { ErrorInfo } from '../interfaces';
import { DURABLE_ERROR_BRAND } from '../errors/durable-error-brand';
import { storableText } from '../schema/define-signal';
import { capMessage, capStack, safeString } from '../schema/safe-string';

/** The step each error came out of (the innermost one), for its ErrorInfo. */
const stepOf = new WeakMap<object, string>();

/** Remembers that `error` came out of the step `key`, unless an inner step already claimed it. */
export function tagStep(error: unknown, key: string): void {
  if (error instanceof Error && !stepOf.has(error)) stepOf.set(error, key);
}

/**
 * The codes of the errors that retrying cannot fix (stored failures, mistakes in the workflow's code): they
 * fail the step or the run at once. Known by code and brand, not by class: a NonRetryableError of another
 * copy of the library (a second install) is another class, and was retried.
 */
const NON_RETRYABLE: ReadonlySet<string> = new Set<
  (
    | NonRetryableError
    | ChildWorkflowFailedError
    | StepResultMismatchError
    | WorkflowNotFoundError
    | UnknownSignalError
    | InvalidArgumentError
    | InvalidPayloadError
    | RunConflictError
    | DeadlineExceededError
  )['code']
>([
  'NON_RETRYABLE',
  'CHILD_WORKFLOW_FAILED',
  'STEP_RESULT_MISMATCH',
  'WORKFLOW_NOT_FOUND',
  'UNKNOWN_SIGNAL',
  'INVALID_ARGUMENT',
  'INVALID_PAYLOAD',
  'RUN_CONFLICT',
  'DEADLINE_EXCEEDED',
]);

export function isNonRetryable(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as unknown as Record<symbol, unknown>)[DURABLE_ERROR_BRAND] === true &&
    NON_RETRYABLE.has((error as DurableError).code)
  );
}

/** The name and message of anything thrown, bounded in size, with its stack (capped) and the step it came out of. */
export function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof Error) {
    const step = stepOf.get(error);
    return {
      name: storableText(capMessage(error.name || 'Error')),
      message: storableText(capMessage(String(error.message))),
      ...(typeof error.stack === 'string' && { stack: storableText(capStack(error.stack)) }),
      ...(step !== undefined && { step }),
    };
  }
  return { name: 'Error', message: storableText(capMessage(typeof error === 'string' ? error : safeString(error))) };
}

/** Rebuilds a stored failure so that a replay throws what the first execution threw. */
export function rebuildError(stored: ErrorInfo & Record<string, unknown>): Error {
  if (stored.name === 'ChildWorkflowFailedError' && typeof stored.childRunId === 'string') {
    return new ChildWorkflowFailedError(stored.childRunId, stored.childStatus as 'failed' | 'cancelled', stored.childError as ErrorInfo);
  }
  if (stored.name === 'DeadlineExceededError' && typeof stored.runId === 'string' && typeof stored.deadline === 'string') {
    return new DeadlineExceededError(stored.runId, new Date(stored.deadline), stored.message);
  }
  const error = new NonRetryableError(stored.message);
  error.name = stored.name;
  // A replayed failure keeps where it was first thrown, and the step it came out of.
  if (typeof stored.stack === 'string') error.stack = stored.stack;
  if (typeof stored.step === 'string') tagStep(error, stored.step);
  return error;
}
