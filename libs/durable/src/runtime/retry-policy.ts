import { InvalidArgumentError } from '../errors';
import type { RetryPolicy } from '../interfaces';
import { toMs } from '../schema/duration';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';

const RETRY_KEYS = keysOf<RetryPolicy>({ maxAttempts: true, initialDelay: true, backoffFactor: true, maxDelay: true });

/** A RetryPolicy with every field settled, durations in milliseconds. */
export interface ResolvedRetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  backoffFactor: number;
  maxDelayMs: number;
}

export const DEFAULT_RUN_RETRY: ResolvedRetryPolicy = { maxAttempts: 5, initialDelayMs: 1_000, backoffFactor: 2, maxDelayMs: 300_000 };
export const NO_RETRY: ResolvedRetryPolicy = { maxAttempts: 1, initialDelayMs: 1_000, backoffFactor: 2, maxDelayMs: 300_000 };

/** Fills a policy from defaults and checks it, so that a bad policy fails at boot, not at the first failure. */
export function resolveRetryPolicy(policy: RetryPolicy | undefined, defaults: ResolvedRetryPolicy, where: string): ResolvedRetryPolicy {
  if (!policy) return defaults;
  // A misspelt field (`maxAtempts`) would leave its default: five attempts where one was meant.
  refuseUnknownKeys(policy, RETRY_KEYS, `${where} retry`);
  const resolved: ResolvedRetryPolicy = {
    maxAttempts: policy.maxAttempts ?? defaults.maxAttempts,
    initialDelayMs: policy.initialDelay !== undefined ? toMs(policy.initialDelay, `${where} retry.initialDelay`) : defaults.initialDelayMs,
    backoffFactor: policy.backoffFactor ?? defaults.backoffFactor,
    maxDelayMs: policy.maxDelay !== undefined ? toMs(policy.maxDelay, `${where} retry.maxDelay`) : defaults.maxDelayMs,
  };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) {
    throw new InvalidArgumentError(`${where}: retry.maxAttempts must be a whole number >= 1; got ${policy.maxAttempts}.`);
  }
  if (!Number.isFinite(resolved.backoffFactor) || resolved.backoffFactor < 1) {
    throw new InvalidArgumentError(`${where}: retry.backoffFactor must be a number >= 1; got ${policy.backoffFactor}.`);
  }
  return resolved;
}

/** The delay before attempt `failedAttempts + 1`: initialDelay * factor^(failed-1), capped at maxDelay. */
export function backoffMs(policy: ResolvedRetryPolicy, failedAttempts: number): number {
  if (policy.initialDelayMs === 0) return 0; // else 0 * Infinity, NaN, once the factor's power overflows
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.backoffFactor ** Math.max(0, failedAttempts - 1));
}
