import { InvalidArgumentError } from '../errors';
import type { Duration } from '../interfaces';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
/** Longer than any real wait (about 100 years), short enough to stay exact in a Postgres interval. */
export const MAX_DURATION_MS = 100 * 365 * UNIT_MS.d;

/** Milliseconds of a Duration; throws InvalidArgumentError for negatives, NaN, garbage and absurd values. */
export function toMs(duration: Duration, what = 'duration'): number {
  let ms: number;
  if (typeof duration === 'number') {
    ms = duration;
  } else {
    const match = typeof duration === 'string' ? PATTERN.exec(duration.trim()) : null;
    if (!match) {
      throw new InvalidArgumentError(
        `${what} ${JSON.stringify(duration)} is not a duration: use milliseconds or a string like '30s', '5m', '2h', '7d'.`,
      );
    }
    ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_DURATION_MS) {
    throw new InvalidArgumentError(
      `${what} must be a finite number of milliseconds from 0 to ${MAX_DURATION_MS}; got ${String(duration)}.`,
    );
  }
  return Math.round(ms);
}
