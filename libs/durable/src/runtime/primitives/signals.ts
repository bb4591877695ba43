import type { SignalOutcome, SignalRef } from '../../interfaces';
import { toMs } from '../../schema/duration';
import { Execution, never } from '../execution';
import { deserialize } from '../../schema/serializer';
import { declaredName } from './declared';
import { journaledInstant } from './sleep';

/** Await: the payload of the signal, from the journal when buffered; else the run parks until it comes. */
export async function waitForSignal<T>(execution: Execution, ref: SignalRef<T>): Promise<T> {
  if (!execution.isActive) return never();
  await execution.enter('waitForSignal');
  const name = declaredName(execution.workflow, 'signal', ref);
  const key = execution.keyFor(name, 'signal');
  execution.deadline.replayAt(key);
  const { signals } = execution.journal;
  if (signals.has(name)) return deserialize<T>(signals.get(name));
  await execution.deadline.beforeWait(key);
  return execution.suspend({ reason: { kind: 'signal', name }, name, wakeAt: null });
}

/**
 * AwaitFor: the signal raced against a deadline journaled once as now() + timeout. Whichever wins is
 * final: a timeout is checkpointed, so a signal arriving later never changes the outcome on replay.
 * Once the deadline is journaled, the signal wins only if it was delivered by then: a run that executes
 * again after its deadline (its instance was down, its workers busy) finds a signal delivered late in
 * its journal, and the timeout wins, as it would have had the run been awake at the instant. Runs of a
 * format before 3 (KEY_FORMAT) keep the rule they were decided by: the signal in the journal wins.
 */
export async function waitForSignalWithin<T>(execution: Execution, ref: SignalRef<T>, timeout: unknown): Promise<SignalOutcome<T>> {
  if (!execution.isActive) return never();
  await execution.enter('waitForSignal');
  const name = declaredName(execution.workflow, 'signal', ref);
  const ms = toMs(timeout as never, `waitForSignal("${name}") timeout`);
  const deadlineKey = execution.keyFor(name, 'signal-deadline');
  const timeoutKey = `${deadlineKey}:timed-out`;
  const { journal, deps } = execution;
  const received = (): SignalOutcome<T> => ({ received: true, payload: deserialize<T>(journal.signals.get(name)) });
  // This wait's deadline and timeout checkpoints are on the path whichever way it ends: looked up, so a
  // re-execution that returns early here, or throws the run's deadline here, does not count them as
  // stranded (UNREACHED_CHECKPOINTS). The exact keys, not a prefix: 'signal-deadline:gone' is another wait's, not 'go''s.
  journal.steps.has(deadlineKey);
  const timedOut = journal.steps.has(timeoutKey);
  execution.deadline.replayAt(deadlineKey);
  if (timedOut) return { received: false };
  const byDelivery = journal.keyFormat >= 3;
  if (journal.signals.has(name) && !(byDelivery && journal.steps.has(deadlineKey))) return received(); // buffered before the wait
  const deadline = await journaledInstant(execution, deadlineKey, 'deadline', ms);
  const wakes = execution.wakeCursor();
  for (;;) {
    const deliveredAt = journal.signals.has(name) ? (journal.signalTimes.get(name) ?? deadline) : undefined;
    if (deliveredAt !== undefined && (deliveredAt <= deadline || !byDelivery)) return received();
    const remaining = deadline - deps.clock.now();
    if (remaining <= 0 || deliveredAt !== undefined) {
      await execution.checkpoint(timeoutKey, 'timeout', { outcome: 'ok', result: null, error: null }, null);
      return { received: false };
    }
    await execution.deadline.beforeWait(deadlineKey);
    const inProcess = execution.deadline.capMs(remaining);
    if (inProcess > deps.inlineWaitMs) {
      return execution.suspend({ reason: { kind: 'signal', name, deadline: new Date(deadline) }, name, wakeAt: new Date(deadline) });
    }
    await wakes.next(inProcess);
    if (!execution.isActive) return never();
    const signal = await deps.journal.readSignal(execution.runId, name);
    if (signal) {
      journal.signals.set(name, signal.payload);
      journal.signalTimes.set(name, new Date(signal.deliveredAt).getTime());
    }
  }
}
