import type { Duration } from './duration.interface';

/**
 * A queue's limits (`DurableModule.forRoot({ queues })`), cluster-wide and counted on executing
 * (`running`) runs only: a parked run holds no slot. A limit left out is no limit.
 */
export interface QueueOptions {
  /** Runs of the queue executing at once across every instance. */
  concurrency?: number;
  /** Runs executing at once per `partitionKey` (a tenant, say); runs without a key count only against `concurrency`. */
  partitionConcurrency?: number;
  /** At most `limit` runs begin their first execution in any sliding `period`; later wakes of a run are not counted. */
  rateLimit?: { limit: number; period: Duration };
}

/** How `start` places a run in its queue (all optional; see docs/guides/flow-control.md). */
export interface QueueStartOptions {
  /** Overrides the workflow's queue. */
  queue?: string;
  /** `partitionConcurrency` applies per key (a tenant id, say). */
  partitionKey?: string;
  /** Lower runs first, a whole number from 0 to 1000 (default 100); first in, first out within one priority. */
  priority?: number;
  /** While an unfinished run in this queue has it, start returns that run (`created: false`). */
  deduplicationId?: string;
  /**
   * Starts that share `key` (for this workflow) while its run has not begun make one run: each replaces
   * the input and moves the start to now + `delay`, never past the first start + `maxDelay`.
   */
  debounce?: { key: string; delay: Duration; maxDelay?: Duration };
}

/** Where a run goes in its queue, the options a child takes too (ChildStartOptions). */
export type QueuePlacementOptions = Pick<QueueStartOptions, 'queue' | 'partitionKey' | 'priority'>;

/**
 * Why a pending run of a queue does not execute yet (GET /queues counts them by it). A run's wait
 * reason may also say `undeclared`: the instance that read it declares no such queue.
 */
export type QueueCause = 'concurrency' | 'partition' | 'rate';

/** One queue as GET /queues shows it. */
export interface QueueView {
  name: string;
  concurrency: number | null;
  partitionConcurrency: number | null;
  rateLimit: { limit: number; periodMs: number } | null;
  /** Runs executing now. */
  running: number;
  /** Runs due and waiting for a slot, by what holds them back. */
  pending: Record<QueueCause, number>;
  /** The ten partitions with the most pending runs. */
  partitions: Array<{ key: string; running: number; pending: number }>;
  /** Runs that began their first execution in the current rate window (null without a rate limit). */
  rateWindowUsed: number | null;
}
