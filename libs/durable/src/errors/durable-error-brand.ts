/**
 * Marks the errors of every copy of this library (on DurableError's prototype): Symbol.for gives one key
 * across copies, so the engine knows an error of another copy (a second install in a monorepo, whose
 * classes `instanceof` does not match) by the brand and its `code` (isNonRetryable).
 */
export const DURABLE_ERROR_BRAND = Symbol.for('nestjs-durable.DurableError');
