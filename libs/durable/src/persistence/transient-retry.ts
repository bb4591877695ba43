import { setTimeout as delay } from 'node:timers/promises';
import type { EntityManager } from 'typeorm';

/** How long an idempotent write keeps trying through a cut session or a restarting server. */
export const TRANSIENT_RETRY_MS = 10_000;

/**
 * The session or the server went away (57P0x, 53300, network errors), or the statement lost a deadlock
 * or a serialization conflict (40P01, 40001: it was rolled back whole, so trying again is always safe).
 */
const TRANSIENT_CODES = new Set(['57P01', '57P02', '57P03', '53300', '40P01', '40001', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const TRANSIENT_MESSAGE = /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/i;

/** Errors after which the same statement can succeed on another try: the session or the server went away, or it lost a deadlock. */
export function isTransientDbError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || TRANSIENT_CODES.has(code))) return true;
  return typeof message === 'string' && TRANSIENT_MESSAGE.test(message);
}

/** A deadlock or a serialization failure: Postgres rolled the statement back whole, so none of it landed. */
export function isRolledBackDbError(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return code === '40P01' || code === '40001';
}

/**
 * Runs an idempotent write again, on a fresh pooled connection, while it fails for a transient
 * reason, backing off up to a second between tries, for at most `withinMs`; then, and for any
 * other error, it fails as it would have. Whether a cut session had committed the write or not, the
 * next try finds the same answer (the writes retried are keyed or fenced, see docs/architecture.md).
 */
export async function retryTransient<T>(
  write: () => Promise<T>,
  withinMs = TRANSIENT_RETRY_MS,
  retriable = isTransientDbError,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 1_000)) {
    try {
      return await write();
    } catch (error) {
      if (!retriable(error) || Date.now() + pause > deadline) throw error;
      await delay(pause);
    }
  }
}

/**
 * `retryTransient` for a write that may join a caller's transaction: inside one (`manager`) it runs
 * once, since a failed statement aborts the caller's whole transaction and only the caller can try it again.
 */
export function retryOutsideTransaction<T>(manager: EntityManager | undefined, write: () => Promise<T>): Promise<T> {
  return manager ? write() : retryTransient(write);
}

/**
 * `retryOutsideTransaction`, also telling whether a try failed before the one that answered: that one
 * may have committed, and the answer then finds its work done (a start finds its run existing).
 */
export async function retryTelling<T>(
  manager: EntityManager | undefined,
  write: () => Promise<T>,
): Promise<{ answer: T; retried: boolean }> {
  let tries = 0;
  const answer = await retryOutsideTransaction(manager, () => {
    tries++;
    return write();
  });
  return { answer, retried: tries > 1 };
}

/**
 * For a write that is not idempotent (an operator's transition: tried again after it landed, it
 * would answer that the run is already cancelled): retried only when Postgres rolled it back whole.
 */
export function retryRolledBack<T>(write: () => Promise<T>): Promise<T> {
  return retryTransient(write, TRANSIENT_RETRY_MS, isRolledBackDbError);
}
