import { DURABLE_ERROR_BRAND } from './durable-error-brand';

/** The base of every error this library throws. `code` is stable: match on it, not on the message. */
export abstract class DurableError extends Error {
  abstract readonly code: string;
  /** Extra, machine-readable facts (the REST API sends them as `details`). */
  readonly details?: unknown;

  constructor(message: string, details?: unknown) {
    super(message);
    this.name = new.target.name;
    if (details !== undefined) this.details = details;
  }
}

// On the prototype, not each error: a logged error does not show it.
Object.defineProperty(DurableError.prototype, DURABLE_ERROR_BRAND, { value: true });
