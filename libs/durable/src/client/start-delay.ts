import { InvalidArgumentError } from '../errors';
import type { StartOptions } from '../interfaces';
import { MAX_DURATION_MS, toMs } from '../schema/duration';

/** A delayed start as the start statement takes it: an instant, or milliseconds from the database's now(). */
export interface StartDelay {
  startAt?: Date;
  delayMs?: number;
}

/**
 * The delay a start asks for (`startAt` or `delay`, not both), checked before anything is written:
 * InvalidArgumentError naming the option at fault. Neither: no delay.
 */
export function startDelayOf(opts: Pick<StartOptions, 'startAt' | 'delay'>): StartDelay {
  const { startAt, delay } = opts;
  if (startAt !== undefined && delay !== undefined) {
    throw new InvalidArgumentError('start() takes either startAt or delay, not both: give the instant, or the time from now.');
  }
  if (delay !== undefined) return { delayMs: toMs(delay, 'The start option delay') };
  if (startAt === undefined) return {};
  if (!(startAt instanceof Date) || Number.isNaN(startAt.getTime())) {
    throw new InvalidArgumentError(`The start option startAt must be a valid Date; got ${describe(startAt)}.`);
  }
  if (startAt.getTime() - Date.now() > MAX_DURATION_MS) {
    throw new InvalidArgumentError(`The start option startAt must be at most 100 years ahead; got ${startAt.toISOString()}.`);
  }
  // A past instant starts the run now; one this far back (Postgres refuses instants before 4713 BC) is a mistake.
  if (Date.now() - startAt.getTime() > MAX_DURATION_MS) {
    throw new InvalidArgumentError(`The start option startAt must be at most 100 years past; got ${startAt.toISOString()}.`);
  }
  return { startAt };
}

function describe(value: unknown): string {
  if (value instanceof Date) return 'an invalid Date';
  return typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 100))} (pass new Date(…))` : typeof value;
}
