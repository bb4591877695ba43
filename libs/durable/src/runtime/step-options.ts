import type { StepOptions } from '../interfaces';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';

const STEP_OPTION_KEYS = keysOf<StepOptions>({ key: true, retry: true, schema: true });

/** Refuses an option a step does not have (`@Step` at boot, `ctx.step` when called): a misspelt `retry` would leave it with none. */
export function checkStepOptions(options: StepOptions, step: string): void {
  refuseUnknownKeys(options, STEP_OPTION_KEYS, `Step "${step}"`);
}
