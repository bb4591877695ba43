import type { Type } from '@nestjs/common';
import type { Duration } from './duration.interface';
import type { PayloadSchema } from './payload-schema.interface';
import type { QueuePlacementOptions } from './queue.interface';
import type { RetryPolicy } from './retry-policy.interface';
import type { ScheduleSpec } from './schedule.interface';
import type { SelectArm, SelectArms, SelectOptions, SelectResult } from './select.interface';

/** What a `@Workflow` class implements. */
export interface DurableWorkflow<I = unknown, O = unknown> {
  run(input: I, ctx: WorkflowContext): Promise<O>;
}

export type WorkflowRef<I, O> = Type<DurableWorkflow<I, O>> | string;

export interface WorkflowOptions {
  /** Run-level retries; default { maxAttempts: 5, initialDelay: '1s', backoffFactor: 2, maxDelay: '5m' }. */
  retry?: RetryPolicy;
  /** When given, only these signals are accepted, each payload validated. */
  signals?: SignalDefinition<any>[];
  /** When given, only these channels are accepted, each message validated. */
  channels?: ChannelDefinition<any>[];
  /** Durable cron schedules that start this workflow; reconciled with the database at boot. */
  schedules?: ScheduleSpec[];
  /** The queue (of the module's `queues`) its runs wait in for a slot; none: unlimited. */
  queue?: string;
  /**
   * A run deadline for every run of this workflow: the run must end within this time of its creation
   * (a queued or delayed run: of its first execution); a run not begun by then (one waiting for a worker) is
   * failed without running.
   * `start(…, { timeout | deadline })` overrides it.
   */
  timeout?: Duration;
  /** How long a run may go on after its deadline to clean up before it is failed; default the module's `deadlineGrace`. */
  deadlineGrace?: Duration;
}

export interface StepOptions {
  /** The checkpoint key becomes `${name}:${key(...args)}` (a `%`, `:` or `#` in the name percent-escaped); not for a step named as a primitive's key prefix. */
  key?: (...args: any[]) => string;
  /** In-process retries of this step before its error reaches the run (default: none). */
  retry?: RetryPolicy;
  /** A stored result that no longer validates fails the run with StepResultMismatchError. */
  schema?: PayloadSchema;
}

/** A typed signal: one payload per (run, name), validated on delivery. */
export interface SignalDefinition<T> {
  readonly kind: 'signal';
  readonly name: string;
  readonly schema?: PayloadSchema<T>;
  /** Carries the payload type only; never set. */
  readonly __type?: T;
}

/** A typed channel: ordered messages per (run, channel), deduplicated by key. */
export interface ChannelDefinition<T> {
  readonly kind: 'channel';
  readonly name: string;
  readonly schema?: PayloadSchema<T>;
  readonly __type?: T;
}

export type SignalRef<T> = SignalDefinition<T> | string;
export type ChannelRef<T> = ChannelDefinition<T> | string;

export type SignalOutcome<T> = { received: true; payload: T } | { received: false };

export interface ChannelMessage<T> {
  key: string;
  /** Position in this run's channel: 1, 2, 3… in delivery order, without gaps. */
  seq: number;
  payload: T;
  sentAt: Date;
}

export interface ChildHandle<O> {
  readonly runId: string;
  /** The child's output, memoized in the parent's journal; ChildWorkflowFailedError when it failed or was cancelled. */
  result(): Promise<O>;
}

export type ChildResult<H> = H extends ChildHandle<infer O> ? O : never;

/**
 * `queue`, `partitionKey` and `priority` place the child in its queue as `start`'s options do (a tenant's
 * partition, express first); a child takes no deduplication id or debounce (its step memoizes it).
 */
export interface ChildStartOptions extends QueuePlacementOptions {
  /** Memoizes the spawn: the child's id is derived from the parent's and this step. */
  step: string;
  /**
   * A detached child keeps its own deadline only (not the earlier of its own and its parent's) and is
   * not cancelled with its parent. Default false.
   */
  detached?: boolean;
}

/** The durable primitives a run uses; passed to `run(input, ctx)`. */
export interface WorkflowContext {
  readonly runId: string;
  readonly workflow: string;
  /** 1 + the failed executions so far (wakes and replays do not count). */
  readonly attempt: number;
  /** An inline step: `fn` runs once; its stored outcome is returned on every later execution. */
  step<T>(name: string, fn: () => T | Promise<T>, options?: StepOptions): Promise<T>;
  /** A durable timer: the wake instant is journaled once; a resumed run waits only the remainder. */
  sleep(name: string, duration: Duration): Promise<void>;
  /** A durable timer to an instant; an instant in the past does not wait. */
  sleepUntil(name: string, at: Date): Promise<void>;
  /** Await: the payload of the signal (buffered deliveries resolve at once); the run parks until it comes. */
  waitForSignal<T>(signal: SignalRef<T>): Promise<T>;
  /** AwaitFor: the signal raced against a deadline journaled once as now() + timeout; whichever wins is final. */
  waitForSignal<T>(signal: SignalRef<T>, opts: { timeout: Duration }): Promise<SignalOutcome<T>>;
  /** The oldest un-acked message of the channel; writes nothing; parks while the channel is empty. */
  receive<T>(channel: ChannelRef<T>): Promise<ChannelMessage<T>>;
  /** Journals the message as consumed: receive moves past it, in this execution and every later one. */
  ack(channel: ChannelRef<unknown>, key: string): Promise<void>;
  /**
   * receive → handle in a step keyed by the message → ack, in a loop that ends after the message
   * `until` accepts; the end is journaled, so a re-run returns the closing message at once.
   */
  consume<T>(
    channel: ChannelRef<T>,
    handle: (message: ChannelMessage<T>) => unknown,
    opts: { until: (message: ChannelMessage<T>) => boolean },
  ): Promise<ChannelMessage<T>>;
  /** Spawns a child run memoized by `step`: a replay reattaches to the same child, never a second one. */
  startChild<I, O>(workflow: WorkflowRef<I, O>, input: I, opts: ChildStartOptions): Promise<ChildHandle<O>>;
  /** Fan-in: resolves like Promise.all; the first unfinished child parks the parent. */
  all<T extends readonly ChildHandle<unknown>[]>(handles: T): Promise<{ [K in keyof T]: ChildResult<T[K]> }>;
  /**
   * The first of several things: the arm that is ready first (the earliest delivered among those ready
   * when it looks, ties to the first listed) is journaled under `name` and returned on every later
   * execution. Losing arms consume nothing: signals stay buffered, messages un-acked, children running.
   */
  select<A extends SelectArms>(name: string, arms: A, opts?: SelectOptions): Promise<SelectResult<A>>;
  /** A select arm: the signal's payload (buffered, it is ready at once). */
  signal<T>(signal: SignalRef<T>): SelectArm<T>;
  /** A select arm: the oldest un-acked message of the channel, not acked by the select. */
  message<T>(channel: ChannelRef<T>): SelectArm<ChannelMessage<T>>;
  /** A select arm: an instant, or a duration from the first time the select looks (journaled once); its value is the instant. */
  timer(at: Duration | Date): SelectArm<Date>;
  /** Adds or replaces business keys of this run (a tracking number once known), journaled once; see `listRuns({ keys })`, `signalByKeys`. */
  setKeys(keys: Record<string, string>): Promise<void>;
  /**
   * A deploy's change at this point: true for a run that reaches it with nothing recorded past it
   * (take the new path), false for one whose older code already went past it (keep the old path).
   * A checkpoint the code no longer reaches (a removed step) counts as recorded past it. Journaled on first encounter.
   */
  patched(id: string): Promise<boolean>;
}
