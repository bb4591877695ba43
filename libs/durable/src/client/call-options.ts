// What the client calls take as options: each call's option names, checked before anything is read or written.
import { InvalidArgumentError } from '../errors';
import type {
  ActorOptions,
  Duration,
  ForkOptions,
  RunFilter,
  SignalByKeysOptions,
  SignalWithStartRun,
  StartOptions,
  TriggerOptions,
  TxOptions,
} from '../interfaces';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';

/** The option names of each call, listed once (`keysOf` stops compiling when an options type gains or loses one). */
export const CALL_OPTIONS = {
  start: keysOf<StartOptions & TxOptions & ActorOptions>({
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
  }),
  fork: keysOf<ForkOptions & ActorOptions>({ fromStep: true, runId: true, input: true, signals: true, actor: true }),
  /** A delivery (signal, send, signalWithStart): a misspelt `manager` would deliver outside the caller's transaction. */
  delivery: keysOf<TxOptions & ActorOptions>({ manager: true, actor: true }),
  signalByKeys: keysOf<SignalByKeysOptions & TxOptions & ActorOptions>({ workflow: true, fanOut: true, manager: true, actor: true }),
  signalWithStartRun: keysOf<SignalWithStartRun<unknown>>({ runId: true, input: true, keys: true }),
  /** An operator's call on a run or schedule (resume, cancel, retry, setDeadline, pause, backfill). */
  operator: keysOf<ActorOptions>({ actor: true }),
  trigger: keysOf<TriggerOptions>({ overlap: true, expectLastRun: true, actor: true }),
  result: keysOf<{ timeout?: Duration }>({ timeout: true }),
  /** A misspelt filter (`workfow`) would list, and a script then act on, every workflow's runs. */
  listRuns: keysOf<RunFilter>({
    status: true,
    workflow: true,
    waitingFor: true,
    schedule: true,
    queue: true,
    keys: true,
    forkedFrom: true,
    createdAfter: true,
    createdBefore: true,
    updatedAfter: true,
    updatedBefore: true,
    sort: true,
    order: true,
    limit: true,
    cursor: true,
  }),
};

/**
 * Refuses options that are not an object, or that name an option `known` lacks: a misspelt one
 * (`partitonKey`, `fanout`, `manger`) would be ignored, and the call made without the limit, the fan-out
 * or the transaction it was meant to have. TypeScript catches it only in an object literal written at the call.
 */
export function checkCallOptions(opts: unknown, known: readonly string[], where: string): void {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts))
    throw new InvalidArgumentError(
      `${where} takes an options object; got ${opts === null ? 'null' : Array.isArray(opts) ? 'an array' : typeof opts}.`,
    );
  refuseUnknownKeys(opts, known, where);
}
