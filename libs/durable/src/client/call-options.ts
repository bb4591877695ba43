// What WorkflowClient's start() and fork() take: each call's option names, checked before anything is read or written.
import { InvalidArgumentError } from '../errors';
import type { ActorOptions, ForkOptions, StartOptions, TxOptions } from '../interfaces';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';

const START_OPTION_KEYS = keysOf<StartOptions & TxOptions & ActorOptions>({
  runId: true,
  startAt: true,
  delay: true,
  timeout: true,
  deadline: true,
  timeoutIncludesQueue: true,
  keys: true,
  queue: true,
  partitionKey: true,
  priority: true,
  deduplicationId: true,
  debounce: true,
  manager: true,
  actor: true,
});

/**
 * Refuses a start option `start()` does not have: a misspelt one (`partitonKey`, `timout`) would be
 * ignored, and the run started without the limit or deadline it was meant to have. TypeScript catches
 * it only in an object literal written at the call.
 */
export function checkStartOptions(opts: object): void {
  if (!opts || typeof opts !== 'object')
    throw new InvalidArgumentError(`start() takes an options object; got ${opts === null ? 'null' : typeof opts}.`);
  refuseUnknownKeys(opts, START_OPTION_KEYS, 'start()');
}

const FORK_OPTION_KEYS = keysOf<ForkOptions & ActorOptions>({ fromStep: true, runId: true, input: true, signals: true, actor: true });

/** Refuses an option `fork()` does not have (`signal: 'all'` for `signals` would fork without the later signals). */
export function checkForkOptions(opts: object): void {
  if (!opts || typeof opts !== 'object')
    throw new InvalidArgumentError(`fork() takes an options object with fromStep; got ${opts === null ? 'null' : typeof opts}.`);
  refuseUnknownKeys(opts, FORK_OPTION_KEYS, 'fork()');
}
