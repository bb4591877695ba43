import { InvalidArgumentError } from '../errors';

/**
 * The keys an options type takes, listed once: `keysOf<QueueOptions>({ concurrency: true, … })` stops
 * compiling when the type gains or loses one.
 */
export const keysOf = <T>(keys: Record<keyof T, true>): readonly string[] => Object.keys(keys);

/**
 * Throws InvalidArgumentError naming the first key of `given` that `known` lacks: "`where`: unknown option
 * `key`; it takes …". A misspelt option (`timeZone` for `timezone`) would otherwise be ignored, and its default
 * taken without a word. Checked where the call is made, each time a run's code makes it (a decided select replays
 * before it reads its options): a run in flight whose code passes a misspelt option fails at its next execution,
 * and is retried once the code is fixed.
 */
export function refuseUnknownKeys(given: object, known: readonly string[], where: string): void {
  // Whatever its value: a misspelt key set from configuration (`timout: process.env.X`) must fail where it is unset too.
  const unknown = Object.keys(given).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new InvalidArgumentError(`${where}: unknown option ${unknown}; it takes ${known.join(', ')}.`);
}
