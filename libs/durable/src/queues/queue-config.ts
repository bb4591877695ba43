import { InvalidArgumentError } from '../errors';
import type { QueueOptions } from '../interfaces';
import { toMs } from '../schema/duration';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';

/** A queue's limits, checked; null is no limit. */
export interface ResolvedQueue {
  name: string;
  concurrency: number | null;
  partitionConcurrency: number | null;
  rateLimit: { limit: number; periodMs: number } | null;
}

/** The rate-limited queues and their periods, as two arrays a statement unnests together. */
export interface RateWindows {
  queues: string[];
  periodsMs: number[];
}

export function rateWindowsOf(queues: ReadonlyMap<string, ResolvedQueue>): RateWindows {
  const limited = [...queues.values()].filter((queue) => queue.rateLimit);
  return { queues: limited.map((queue) => queue.name), periodsMs: limited.map((queue) => queue.rateLimit!.periodMs) };
}

/** A queue's name: shown in wait reasons and URLs, so short and plain. */
const NAME = /^[A-Za-z0-9._:-]{1,100}$/;
const MAX_LIMIT = 1_000_000;
/** The options a queue takes, and its rateLimit. */
const OPTIONS = keysOf<QueueOptions>({ concurrency: true, partitionConcurrency: true, rateLimit: true });
const RATE_OPTIONS = keysOf<NonNullable<QueueOptions['rateLimit']>>({ limit: true, period: true });

/** The module's `queues`, each checked: a mistake fails the boot naming the queue and the option. */
export function resolveQueues(queues: Record<string, QueueOptions> | undefined): Map<string, ResolvedQueue> {
  const resolved = new Map<string, ResolvedQueue>();
  if (queues === undefined) return resolved;
  if (!queues || typeof queues !== 'object' || Array.isArray(queues))
    throw new InvalidArgumentError('DurableModule option queues must be an object of queue names to their limits.');
  for (const [name, options] of Object.entries(queues)) {
    if (!NAME.test(name)) throw new InvalidArgumentError(`Queue name "${name}" must be 1 to 100 letters, digits, or . _ : - characters.`);
    if (!options || typeof options !== 'object')
      throw new InvalidArgumentError(`Queue "${name}" needs an options object; got ${typeof options}.`);
    const limit = (option: string, value: unknown) => {
      if (value === undefined) return null;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LIMIT)
        throw new InvalidArgumentError(`Queue "${name}": ${option} must be a whole number from 1 to ${MAX_LIMIT}; got ${String(value)}.`);
      return value;
    };
    refuseUnknownKeys(options, OPTIONS, `Queue "${name}"`);
    const rate = options.rateLimit;
    if (rate !== undefined && (!rate || typeof rate !== 'object' || rate.limit === undefined || rate.period === undefined))
      throw new InvalidArgumentError(`Queue "${name}": rateLimit must be { limit, period }, e.g. { limit: 60, period: '1m' }.`);
    if (rate) refuseUnknownKeys(rate, RATE_OPTIONS, `Queue "${name}" rateLimit`);
    const periodMs = rate ? toMs(rate.period, `Queue "${name}": rateLimit.period`) : null;
    // An empty window counts no beginnings: the limit would admit without end.
    if (periodMs === 0)
      throw new InvalidArgumentError(`Queue "${name}": rateLimit.period must be at least 1 ms; got ${String(rate!.period)}.`);
    resolved.set(name, {
      name,
      concurrency: limit('concurrency', options.concurrency),
      partitionConcurrency: limit('partitionConcurrency', options.partitionConcurrency),
      rateLimit: rate ? { limit: limit('rateLimit.limit', rate.limit)!, periodMs: periodMs! } : null,
    });
  }
  return resolved;
}

/** The queue a name refers to, or an error naming where the name came from. */
export function queueNamed(queues: ReadonlyMap<string, ResolvedQueue>, name: unknown, where: string): ResolvedQueue {
  const queue = typeof name === 'string' ? queues.get(name) : undefined;
  if (!queue) {
    const known = [...queues.keys()];
    throw new InvalidArgumentError(
      `${where}: unknown queue ${JSON.stringify(name)}; ${known.length ? `the module declares ${known.join(', ')}` : 'the module declares no queues (DurableModule.forRoot({ queues }))'}.`,
    );
  }
  return queue;
}

/**
 * Whether a start may begin a run of this queue at once, in a free slot (see startRunSql): only where
 * concurrency is the queue's one limit. Partition and rate limits are counted under the queue's lock,
 * which only admission takes.
 */
export const admitsAtStart = (queue: ResolvedQueue): boolean => queue.partitionConcurrency === null && queue.rateLimit === null;
