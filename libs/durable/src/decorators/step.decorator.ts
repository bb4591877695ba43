import { SetMetadata } from '@nestjs/common';
import { STEP_METADATA } from '../durable.constants';
import type { StepOptions } from '../interfaces';

export interface StepMetadata {
  name?: string;
  options: StepOptions;
}

/**
 * Memoizes a method of a workflow or of any provider: inside a run, its outcome is checkpointed under
 * its key (default: the method name) and a replay returns the stored outcome without calling it.
 * Outside a run it is a plain call.
 */
export function Step(name?: string, options: StepOptions = {}): MethodDecorator {
  return SetMetadata(STEP_METADATA, { name, options } satisfies StepMetadata);
}
