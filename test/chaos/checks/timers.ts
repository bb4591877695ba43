import { Check, ORDER_MS, startedRuns } from './check';
import { deserialize, Evidence, storedEffect, Violation } from './data';

/**
 * A sleep never ends early and a deadline never fires early, whatever restarted: the step after a
 * sleep has its effect after the journaled instant, and a timeout is checkpointed after the deadline.
 * A completed run (and its child) must have every one of these records, and a run that got past a
 * timer must have it journaled: a sleep without its instant or without the step that follows it, or a
 * timeout without its deadline, is a failure, not a pass. (A deadline is journaled only when the
 * signal was not in yet when the wait began: a run that timed out has one.)
 */
export const checkTimers: Check = (e) => {
  const violations: Violation[] = [];
  let timers = 0;
  const fail = (runId: string, message: string) => violations.push({ check: 'timers', runId, message });
  /**
   * `after`: when what follows the timer happened (undefined: no record of it). `required`: the run got
   * past the timer, so both records must be there.
   */
  const early = (runId: string, timerKey: string, after: { at: number | undefined; what: string }, required: boolean) => {
    const step = e.steps.get(runId)?.get(timerKey);
    const instant = step && deserialize<Date>(step.result);
    if (!(instant instanceof Date)) {
      if (required) fail(runId, `${timerKey} has no journaled instant: the timer cannot be checked`);
      return;
    }
    if (after.at === undefined) {
      if (required) fail(runId, `${timerKey} is journaled, but ${after.what} is missing: the timer cannot be checked`);
      return;
    }
    timers++;
    // Both instants are the database's (its now() and clock_timestamp()): only rounding between them.
    if (after.at < instant.getTime() - ORDER_MS)
      fail(runId, `${after.what} is at ${new Date(after.at).toISOString()}, before ${timerKey} ${instant.toISOString()}`);
  };
  for (const runId of startedRuns(e)) {
    const childId = `${runId}/child`;
    const steps = e.steps.get(runId);
    const childSteps = e.steps.get(childId);
    const completed = e.runs.get(runId)?.status === 'completed';
    const childCompleted = e.runs.get(childId)?.status === 'completed';
    early(
      runId,
      'sleep:nap',
      { at: effectAt(e, runId, 'after-nap'), what: 'the effect of after-nap' },
      completed || !!steps?.has('after-nap'),
    );
    early(
      childId,
      'sleep:settle',
      { at: effectAt(e, childId, 'ship'), what: 'the effect of ship' },
      childCompleted || !!childSteps?.has('ship'),
    );
    const timedOut = steps?.get('signal-deadline:approval:timed-out');
    if (timedOut) early(runId, 'signal-deadline:approval', { at: timedOut.committedAt, what: 'the timeout checkpoint' }, true);
  }
  return { violations, metrics: { timers } };
};

/** When the winning effect of a step was written. */
function effectAt(e: Evidence, runId: string, key: string): number | undefined {
  const effect = storedEffect(e.steps.get(runId)?.get(key));
  return e.ledger
    .get(runId)
    ?.get(key)
    ?.find((l) => l.id === effect?.ledgerId)
    ?.at.getTime();
}
