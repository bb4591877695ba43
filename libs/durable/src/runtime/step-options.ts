import { InvalidArgumentError } from '../errors';
import type { StepOptions } from '../interfaces';
import { keysOf, unknownKey } from '../schema/known-keys';

const STEP_OPTION_KEYS = keysOf<StepOptions>({ key: true, retry: true, schema: true });

/** Refuses an option a step does not have (`@Step` at boot, `ctx.step` when called): a misspelt `retry` would leave it with none. */
export function checkStepOptions(options: StepOptions, step: string): void {
  const unknown = unknownKey(options, STEP_OPTION_KEYS);
  if (unknown !== undefined)
    throw new InvalidArgumentError(`Step "${step}": unknown option ${unknown}; a step takes ${STEP_OPTION_KEYS.join(', ')}.`);
}
