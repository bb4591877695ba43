import {
  ChildWorkflowFailedError,
  DeadlineExceededError,
  InvalidArgumentError,
  InvalidPayloadError,
  NonRetryableError,
  RunConflictError,
  StepResultMismatchError,
  UnknownSignalError,
  WorkflowNotFoundError,
} from '../errors';
import type { ErrorInfo } from '../interfaces';
import { storableText } from '../schema/define-signal';

const MAX_MESSAGE = 8_000;

/** Errors that retrying cannot fix (stored failures, mistakes in the workflow's code): they fail the step or the run at once. */
const NON_RETRYABLE = [
  NonRetryableError,
  ChildWorkflowFailedError,
  StepResultMismatchError,
  WorkflowNotFoundError,
  UnknownSignalError,
  InvalidArgumentError,
  InvalidPayloadError,
  RunConflictError,
  DeadlineExceededError,
];

export function isNonRetryable(error: unknown): boolean {
  return NON_RETRYABLE.some((type) => error instanceof type);
}

/** The name and message of anything thrown, bounded in size; never a stack trace. */
export function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof Error) {
    return { name: storableText(truncate(error.name || 'Error')), message: storableText(truncate(String(error.message))) };
  }
  return { name: 'Error', message: storableText(truncate(typeof error === 'string' ? error : safeString(error))) };
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
  return error;
}

function truncate(message: string): string {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}… (${message.length - MAX_MESSAGE} more characters)` : message;
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
