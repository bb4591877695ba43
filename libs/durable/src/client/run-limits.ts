import { InvalidArgumentError } from '../errors';
import type { StartOptions } from '../interfaces';
import type { RunLimits } from '../persistence/run.repository';
import type { RegisteredWorkflow } from '../runtime/workflow.registry';
import { MAX_DURATION_MS, toMs } from '../schema/duration';
import type { StartDelay } from './start-delay';

/**
 * The deadline a start asks for (`timeout` or `deadline`, not both; else the workflow's `timeout`),
 * checked before anything is written: InvalidArgumentError naming the option at fault.
 */
export function runLimitsOf(
  opts: Pick<StartOptions, 'timeout' | 'deadline' | 'timeoutIncludesQueue'>,
  workflow: Pick<RegisteredWorkflow, 'timeoutMs'>,
): RunLimits {
  const { timeout, deadline, timeoutIncludesQueue } = opts;
  if (timeout !== undefined && deadline !== undefined) {
    throw new InvalidArgumentError(
      'start() takes either timeout or deadline, not both: give the time the run may take, or the instant it must end by.',
    );
  }
  if (timeoutIncludesQueue !== undefined && typeof timeoutIncludesQueue !== 'boolean') {
    throw new InvalidArgumentError(`The start option timeoutIncludesQueue must be a boolean; got ${typeof timeoutIncludesQueue}.`);
  }
  if (deadline !== undefined) {
    if (!(deadline instanceof Date) || Number.isNaN(deadline.getTime())) {
      throw new InvalidArgumentError(
        `The start option deadline must be a valid Date; got ${deadline instanceof Date ? 'an invalid Date' : typeof deadline}.`,
      );
    }
    const ahead = deadline.getTime() - Date.now();
    if (ahead <= 0) throw new InvalidArgumentError(`The start option deadline must be ahead; ${deadline.toISOString()} has passed.`);
    if (ahead > MAX_DURATION_MS)
      throw new InvalidArgumentError(`The start option deadline must be at most 100 years ahead; got ${deadline.toISOString()}.`);
    return { deadline };
  }
  const timeoutMs = timeout === undefined ? workflow.timeoutMs : toMs(timeout, 'The start option timeout');
  if (timeoutMs === undefined) return {};
  if (timeoutMs <= 0) throw new InvalidArgumentError('The start option timeout must be more than 0.');
  return { timeoutMs, timeoutIncludesQueue };
}

/**
 * A delayed start whose deadline (an instant, or a timeout that includes the wait) comes at or before
 * its start is refused (InvalidArgumentError): the run would pass its deadline before it began. A
 * debounced start is delayed by its `debounce.delay` (the new run's; a run it joins keeps its own
 * deadline, but the start's options still disagree). Against this process's clock; a delay counts
 * from the database's, a moment apart.
 */
export function checkStartBeforeDeadline(delayed: StartDelay, limits: RunLimits, debounceDelayMs?: number): void {
  const now = Date.now();
  const delayMs = debounceDelayMs ?? delayed.delayMs;
  const startsAt = delayed.startAt?.getTime() ?? (delayMs === undefined ? undefined : now + delayMs);
  const deadline =
    limits.deadline?.getTime() ?? (limits.timeoutIncludesQueue && limits.timeoutMs !== undefined ? now + limits.timeoutMs : undefined);
  if (startsAt === undefined || deadline === undefined || deadline > startsAt) return;
  const [start, remedy] =
    debounceDelayMs === undefined
      ? ['its delayed start', 'an earlier start']
      : ['the end of its debounce.delay', 'a shorter debounce.delay'];
  throw new InvalidArgumentError(
    `The start's deadline (${new Date(deadline).toISOString()}) is at or before ${start} (${new Date(startsAt).toISOString()}): the run would pass it before it began. Give a later deadline or ${remedy}, or a timeout counted from the run's first execution (without timeoutIncludesQueue).`,
  );
}
