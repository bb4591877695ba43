import { DurableError } from './durable.error';

/**
 * Thrown by a step or by `run` to fail at once: a step stores it and rethrows it on replay without
 * running again; from `run` it fails the run without further attempts.
 */
export class NonRetryableError extends DurableError {
  readonly code = 'NON_RETRYABLE';
  constructor(message: string, options?: { cause?: unknown; details?: unknown }) {
    super(message, options?.details);
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}
