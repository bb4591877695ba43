import { AsyncLocalStorage } from 'node:async_hooks';
import type { Execution } from './execution';

/** What code running inside a run can find out about it: the execution, and whether it is inside a step. */
export interface RunScope {
  execution: Execution;
  inStep: boolean;
}

/** Carries the current run through every await of `run()` and of the steps it calls. */
export const runScope = new AsyncLocalStorage<RunScope>();
