import { InvalidArgumentError } from '../errors';
import type { QueueStartOptions } from '../interfaces';
import { toMs } from '../schema/duration';
import { isStorableText } from '../schema/define-signal';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';
import type { ResolvedQueue } from './queue-config';
import { queueNamed } from './queue-config';

export const DEFAULT_PRIORITY = 100;
const DEBOUNCE_KEYS = keysOf<NonNullable<QueueStartOptions['debounce']>>({ key: true, delay: true, maxDelay: true });
const MAX_PRIORITY = 1_000;

/** Where a start puts its run: its queue and place in it, and a debounce. Checked before anything is written. */
export interface QueuePlacement {
  queue: string | null;
  partitionKey: string | null;
  priority: number;
  deduplicationId: string | null;
  debounce: { key: string; delayMs: number; maxDelayMs: number | null } | null;
}

/**
 * The placement a start asks for, each option checked (InvalidArgumentError naming it): the queue is
 * the start's, else the workflow's; the queue's own options need a queue; a debounce needs its key and
 * is not combined with an id, a delayed start or a deduplication id (it picks the run and its instant).
 */
export function queuePlacementOf(
  opts: QueueStartOptions & { runId?: string; startAt?: Date; delay?: unknown },
  workflowQueue: string | null,
  queues: ReadonlyMap<string, ResolvedQueue>,
): QueuePlacement {
  const queue = opts.queue === undefined ? workflowQueue : queueNamed(queues, opts.queue, 'The start option queue').name;
  const inQueue = (option: string) => {
    if (queue === null)
      throw new InvalidArgumentError(`The start option ${option} needs a queue: give queue, or declare @Workflow(name, { queue }).`);
  };
  const text = (option: string, value: unknown): string | null => {
    if (value === undefined) return null;
    if (typeof value !== 'string' || value.length === 0 || value.length > 200 || !isStorableText(value))
      throw new InvalidArgumentError(`The start option ${option} must be a non-empty string of at most 200 characters, without NUL.`);
    return value;
  };
  const partitionKey = text('partitionKey', opts.partitionKey);
  if (partitionKey !== null) inQueue('partitionKey');
  const deduplicationId = text('deduplicationId', opts.deduplicationId);
  if (deduplicationId !== null) inQueue('deduplicationId');
  let priority = DEFAULT_PRIORITY;
  if (opts.priority !== undefined) {
    inQueue('priority');
    if (typeof opts.priority !== 'number' || !Number.isInteger(opts.priority) || opts.priority < 0 || opts.priority > MAX_PRIORITY)
      throw new InvalidArgumentError(
        `The start option priority must be a whole number from 0 to ${MAX_PRIORITY}; got ${String(opts.priority)}.`,
      );
    priority = opts.priority;
  }
  return { queue, partitionKey, priority, deduplicationId, debounce: debounceOf(opts, deduplicationId) };
}

function debounceOf(
  opts: QueueStartOptions & { runId?: string; startAt?: Date; delay?: unknown },
  deduplicationId: string | null,
): QueuePlacement['debounce'] {
  const { debounce } = opts;
  if (debounce === undefined) return null;
  if (!debounce || typeof debounce !== 'object')
    throw new InvalidArgumentError("The start option debounce must be { key, delay, maxDelay? }, e.g. { key: 'user-42', delay: '5s' }.");
  // A misspelt maxDelay would be dropped, and a steady stream of starts put the run off for ever.
  refuseUnknownKeys(debounce, DEBOUNCE_KEYS, 'The start option debounce');
  const key = debounce.key;
  if (typeof key !== 'string' || key.length === 0 || key.length > 200 || !isStorableText(key))
    throw new InvalidArgumentError('The start option debounce needs a key: a non-empty string of at most 200 characters, without NUL.');
  if (debounce.delay === undefined) throw new InvalidArgumentError('The start option debounce needs a delay, e.g. { key, delay: "5s" }.');
  for (const [option, given] of Object.entries({ runId: opts.runId, startAt: opts.startAt, delay: opts.delay, deduplicationId })) {
    if (given !== undefined && given !== null)
      throw new InvalidArgumentError(
        `The start option debounce cannot be combined with ${option}: the debounce picks the run and its start.`,
      );
  }
  const delayMs = toMs(debounce.delay, 'The start option debounce.delay');
  const maxDelayMs = debounce.maxDelay === undefined ? null : toMs(debounce.maxDelay, 'The start option debounce.maxDelay');
  if (maxDelayMs !== null && maxDelayMs < delayMs)
    throw new InvalidArgumentError(`The start option debounce.maxDelay (${maxDelayMs} ms) must be at least its delay (${delayMs} ms).`);
  return { key, delayMs, maxDelayMs };
}
