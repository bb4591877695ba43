import { DurableError } from './durable.error';

/** One problem a schema found, with the path to the offending value. */
export interface PayloadIssue {
  path: string;
  message: string;
}

/** A payload or input is not acceptable: it fails its schema, or it cannot be stored. */
export class InvalidPayloadError extends DurableError {
  readonly code = 'INVALID_PAYLOAD';
  constructor(
    what: string,
    readonly issues: PayloadIssue[],
  ) {
    super(`${what} is invalid: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`, { issues });
  }
}
