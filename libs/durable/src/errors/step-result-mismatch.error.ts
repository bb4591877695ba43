import { DurableError } from './durable.error';

/** A stored step result no longer fits the step's `schema` (the code changed under a live run). */
export class StepResultMismatchError extends DurableError {
  readonly code = 'STEP_RESULT_MISMATCH';
  constructor(
    readonly stepKey: string,
    problems: string,
  ) {
    super(
      `The stored result of step "${stepKey}" no longer matches its schema (${problems}). ` +
        'A stored result cannot be changed by retrying: keep the old shape readable, or rename the step for new runs.',
    );
  }
}
