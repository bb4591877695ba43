import { DurableError } from './durable.error';

/** A call or an option was given a value it cannot take (a bad duration, an empty name, a bad option). */
export class InvalidArgumentError extends DurableError {
  readonly code = 'INVALID_ARGUMENT';
}
