import { InvalidArgumentError } from '../../errors';
import { checkName } from '../../schema/define-signal';
import { Execution, never } from '../execution';
import { deserialize, serialize } from '../../schema/serializer';
import { toMs } from '../../schema/duration';
import type { Duration } from '../../interfaces';

/**
 * A durable timer. The wake instant is journaled on first encounter (from the database clock for a
 * duration), so a resumed run waits only the remainder. A short remainder waits in-process; a longer
 * one parks the run with wake_at at the instant, holding no worker and no timer. A run deadline
 * before the instant ends the sleep there with DeadlineExceededError.
 */
export async function sleep(execution: Execution, name: string, ms: number | undefined, at?: Date): Promise<void> {
  if (!execution.isActive) return never();
  await execution.enter('sleep');
  checkName(name, 'sleep');
  const key = execution.keyFor(name, 'sleep');
  // The instant first: a re-execution that throws here has reached it (it was journaled before the deadline was thrown).
  const until = await journaledInstant(execution, key, 'sleep', ms, at);
  execution.deadline.replayAt(key);
  for (;;) {
    const remaining = until - execution.deps.clock.now();
    if (remaining <= 0) return;
    await execution.deadline.beforeWait(key);
    const inProcess = execution.deadline.capMs(remaining);
    if (inProcess > execution.deps.inlineWaitMs)
      return execution.suspend({ reason: { kind: 'sleep', name, until: new Date(until) }, name: key, wakeAt: new Date(until) });
    await execution.wait(inProcess);
    if (!execution.isActive) return never();
  }
}

/** `sleep` for a Duration: a bad one rejects, as the wait would. */
export async function sleepFor(execution: Execution, name: string, duration: Duration): Promise<void> {
  return sleep(execution, name, toMs(duration, `sleep("${name}") duration`));
}

/** The instant stored under `key`, journaling now() + ms (or `at`) the first time. */
export async function journaledInstant(
  execution: Execution,
  key: string,
  kind: string,
  ms: number | undefined,
  at?: Date,
): Promise<number> {
  const stored = execution.journal.steps.get(key);
  if (stored) return deserialize<Date>(stored.result).getTime();
  if (at) {
    if (!(at instanceof Date) || Number.isNaN(at.getTime()))
      throw new InvalidArgumentError(`sleepUntil("${key}") needs a valid Date; got ${String(at)}.`);
    const kept = await execution.checkpoint(key, kind, { outcome: 'ok', result: serialize(at, 'a wake instant'), error: null }, null);
    return deserialize<Date>(kept.result).getTime();
  }
  const timer = await execution.deps.journal.timer(execution.runId, execution.lease.token, key, kind, ms ?? 0);
  if (!timer) return execution.lose();
  execution.deps.clock.observe(timer.dbNow, timer.answeredAt);
  execution.journal.steps.set(key, { kind, outcome: 'ok', result: timer.until, error: null });
  return deserialize<Date>(timer.until).getTime();
}
