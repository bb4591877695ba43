import { Duration } from './duration.interface';

/** How often, and how far apart, a failed run (or a step, in-process) is tried again. */
export interface RetryPolicy {
  /** Total executions including the first; 1 means no retry. */
  maxAttempts?: number;
  initialDelay?: Duration;
  backoffFactor?: number;
  maxDelay?: Duration;
}
