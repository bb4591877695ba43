import { Check, SLACK_MS, startedRuns } from './check';
import { deserialize, Evidence, storedEffect, Violation } from './data';

/**
 * A sleep never ends early and a deadline never fires early, whatever restarted: the step after a
 * sleep has its effect after the journaled instant, and a timeout is checkpointed after the deadline.
 */
export const checkTimers: Check = (e) => {
  const violations: Violation[] = [];
  let sleeps = 0;
  const early = (runId: string, timerKey: string, afterAt: number | undefined, what: string) => {
    const instant = deserialize<Date>(e.steps.get(runId)?.get(timerKey)?.result ?? null);
    if (!instant || afterAt === undefined) return;
    sleeps++;
    if (afterAt < instant.getTime() - SLACK_MS) {
      violations.push({
        check: 'timers',
        runId,
        message: `${what} at ${new Date(afterAt).toISOString()}, before ${timerKey} ${instant.toISOString()}`,
      });
    }
  };
  for (const runId of startedRuns(e)) {
    if (e.runs.get(runId)?.status !== 'completed') continue;
    early(runId, 'sleep:nap', effectAt(e, runId, 'after-nap'), 'after-nap ran');
    early(`${runId}/child`, 'sleep:settle', effectAt(e, `${runId}/child`, 'ship'), 'ship ran');
    early(
      runId,
      'signal-deadline:approval',
      e.steps.get(runId)?.get('signal-deadline:approval:timed-out')?.committedAt,
      'the timeout was checkpointed',
    );
  }
  return { violations, metrics: { timers: sleeps } };
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
