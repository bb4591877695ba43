import type { EntityManager } from 'typeorm';
import type { ErrorInfo } from '../errors/error-info';
import type { WaitKind, WaitReason } from '../wait-kinds/wait-kind.registry';
import type { Duration } from './duration.interface';
import type { QueueStartOptions } from './queue.interface';
import type { WorkflowRef } from './workflow.interface';

export type { ErrorInfo } from '../errors/error-info';
export type { WaitKind, WaitReason } from '../wait-kinds/wait-kind.registry';

export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';

/** A run as the client and the dashboard see it. */
export interface RunView {
  runId: string;
  workflow: string;
  status: RunStatus;
  input: unknown;
  output?: unknown;
  error?: ErrorInfo;
  waiting?: WaitReason;
  /** The latest execution's `ctx.attempt`. */
  attempt: number;
  parentRunId?: string;
  /** Its queue and place in it, when it has one. A pending queued run's `waiting` says why it does not execute yet (kind `queue`). */
  queue?: string;
  partitionKey?: string;
  priority?: number;
  /** The instant the run must end by (see `StartOptions.deadline`); absent: none, or not yet set (a queued or delayed run's timeout starts when it begins). */
  deadline?: Date;
  /** A child started with `{ detached: true }`: it keeps neither its parent's deadline nor its parent's cancel. */
  detached?: boolean;
  /** Its business keys, when it has any. */
  keys?: Record<string, string>;
  /** The run this one was forked from (`WorkflowClient.fork`). */
  forkedFrom?: string;
  /**
   * A debounced start's key (`start(…, { debounce: { key } })`), and, while it has not begun and has a
   * `maxDelay`, the instant it starts by however many starts put it off.
   */
  debounce?: { key: string; startsBy?: Date };
  /** When it first began executing (a queued run: when admitted); absent until then. */
  beganAt?: Date;
  /** The application's version when the run was created (the module's `appVersion`). */
  appVersion?: string;
  /** What an execution found wrong with the run's journal against the code (see the versioning guide). */
  warning?: RunWarning;
  createdAt: Date;
  updatedAt: Date;
  finishedAt?: Date;
}

export interface RunFilter {
  status?: RunStatus | RunStatus[];
  workflow?: string;
  waitingFor?: WaitKind;
  /** Runs a schedule started (their ids begin with `schedule:<name>:`). */
  schedule?: string;
  /** Runs of this queue. */
  queue?: string;
  /** Runs having every one of these business keys. */
  keys?: Record<string, string>;
  /** The forks of this run (`WorkflowClient.fork`). */
  forkedFrom?: string;
  /** Runs created in this range (either end may be left open). */
  createdAfter?: Date;
  createdBefore?: Date;
  /** Runs last changed in this range (either end may be left open). */
  updatedAfter?: Date;
  updatedBefore?: Date;
  /** The order of the pages: by creation (default) or by last change; newest first (default) or oldest first. */
  sort?: 'created' | 'updated';
  order?: 'desc' | 'asc';
  /** Page size, 1 to 500 (default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** How `WorkflowClient.start` starts a run: its id, when it executes first, and its place in a queue. */
export interface StartOptions extends QueueStartOptions {
  /** Any non-empty string of at most 200 characters; a time-ordered UUID (version 7) when none is given. An existing id starts nothing. */
  runId?: string;
  /**
   * A delayed start: the run exists at once (`waiting`, reason `start`: a handle, signals buffered)
   * and executes first at this instant. An instant already past starts it now. Not with `delay`.
   */
  startAt?: Date;
  /** A delayed start, measured from the database's clock; not with `startAt`. */
  delay?: Duration;
  /**
   * A run deadline as a duration: from the run's creation, or from its first execution for a queued
   * or delayed run (unless `timeoutIncludesQueue`). Overrides the workflow's `timeout`; not with `deadline`.
   */
  timeout?: Duration;
  /**
   * A run deadline as an instant, which must be ahead, and after a delayed start's instant (or a
   * debounced one's, now + `debounce.delay`). Overrides the workflow's `timeout`; not with `timeout`.
   */
  deadline?: Date;
  /**
   * Count `timeout` from the run's creation even when it waits in a queue or for a delayed start first
   * (then longer than the `delay` or `debounce.delay`). A run that has not begun by that deadline (still
   * waiting for its queue, or for its start) is failed, not run.
   */
  timeoutIncludesQueue?: boolean;
  /** Business keys (up to 16 names to strings): find and signal the run by what it is about (`listRuns({ keys })`, `signalByKeys`). */
  keys?: Record<string, string>;
}

/** Join the caller's TypeORM transaction: the write commits or rolls back with it. */
export interface TxOptions {
  manager?: EntityManager;
}

export interface RunHandle<O> {
  readonly runId: string;
  /** False when the run existed already (an idempotent start). */
  readonly created: boolean;
  /** The output; rejects with RunFailedError or CancelledError. */
  result(opts?: { timeout?: Duration }): Promise<O>;
  status(): Promise<RunStatus>;
}

/** Who did it, for the run's history (default `'api'`); the dashboard passes the operator. */
export interface ActorOptions {
  actor?: string;
}

export interface SignalDelivery {
  runId: string;
  name: string;
  /** False for a redelivery: nothing was recorded, the first payload stands. */
  accepted: boolean;
  deliveredAt: Date;
}

export interface MessageDelivery {
  runId: string;
  channel: string;
  key: string;
  /** False for a redelivery of the key: nothing was recorded. */
  accepted: boolean;
  seq: number;
}

/** `SignalService.signalByKeys` options. */
export interface SignalByKeysOptions {
  /** Only runs of this workflow (also picks the schema when workflows declare the signal differently). */
  workflow?: WorkflowRef<any, any>;
  /** 'all' (default): every matched run; 'one': the oldest, taking a failed run last (its fork or successor goes on). */
  fanOut?: 'all' | 'one';
}

/** The run `signalWithStart` starts when it does not exist. */
export interface SignalWithStartRun<I> {
  runId: string;
  input: I;
  keys?: Record<string, string>;
}

/**
 * A run's journal does not fit its code: `UNREACHED_CHECKPOINTS`, checkpoints recorded by an earlier
 * execution that this code did not reach before it parked again (a renamed step or a changed path).
 */
export interface RunWarning {
  code: 'UNREACHED_CHECKPOINTS';
  message: string;
  /** The checkpoint keys not reached (at most 20). */
  keys: string[];
  /** When it was found. */
  at: string;
}

/** `WorkflowClient.fork` options. */
export interface ForkOptions {
  /** The checkpoint key to run again from: it and every checkpoint after it run again. */
  fromStep: string;
  /** The fork's id (a time-ordered UUID, version 7, when none is given). */
  runId?: string;
  /** Overrides the source's input. */
  input?: unknown;
  /** 'before' (default): the signals and messages delivered before `fromStep`'s checkpoint; 'all': all of them. */
  signals?: 'before' | 'all';
}
