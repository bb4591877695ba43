/**
 * The keys an options type takes, listed once: `keysOf<QueueOptions>({ concurrency: true, … })` stops
 * compiling when the type gains or loses one.
 */
export const keysOf = <T>(keys: Record<keyof T, true>): readonly string[] => Object.keys(keys);

/**
 * The first key of `given` that `known` lacks: a misspelt option (`timeZone` for `timezone`) would
 * otherwise be ignored, and its default taken without a word.
 */
export const unknownKey = (given: object, known: readonly string[]): string | undefined =>
  Object.keys(given).find((key) => !known.includes(key));
