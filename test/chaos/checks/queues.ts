import { CHAOS_QUEUES } from '../chaos.workflows';
import { Check } from './check';
import type { HistoryRow, Violation } from './data';

/** The history events with which a run leaves `running`, and so gives its queue slot back. */
const LEAVES_RUNNING = new Set(['parked', 'retry-scheduled', 'completed', 'failed', 'cancelled', 'released']);

/**
 * A queue's concurrency is never exceeded, counted as the library counts it: runs `running` in the
 * database, from the commit of their admission (a `claimed` event naming the queue, or a `started` one
 * when the run took its slot at its start, alone or in a batch of starts) to the commit of
 * the event with which they leave running. A killed worker's run keeps its slot until the run is
 * taken over and ends (a takeover neither takes nor frees one), so kills are inside the count.
 * Measured from history rows and their commit times, never from a process' memory. Each queue of the
 * chaos app is checked; its metrics are named `<queue>.admissions` and `<queue>.mostRunning`.
 */
export const checkQueues: Check = (e) => {
  const violations: Violation[] = [];
  const metrics: Record<string, number> = {};
  for (const queue of CHAOS_QUEUES) {
    const counted = checkQueue(e.history, queue, violations);
    metrics[`${queue.name}.admissions`] = counted.admissions;
    metrics[`${queue.name}.mostRunning`] = counted.mostRunning;
  }
  return { violations, metrics };
};

function checkQueue(
  history: Map<string, HistoryRow[]>,
  queue: { name: string; concurrency: number },
  violations: Violation[],
): { admissions: number; mostRunning: number } {
  const changes: Array<{ at: number; delta: 1 | -1; runId: string }> = [];
  let admissions = 0;
  for (const [runId, rows] of history) {
    let inSlot = false;
    for (const h of [...rows].sort((a, b) => a.committedAt - b.committedAt || a.id - b.id)) {
      if ((h.event === 'claimed' || h.event === 'started') && h.detail?.queue === queue.name && !inSlot) {
        inSlot = true;
        admissions++;
        changes.push({ at: h.committedAt, delta: 1, runId });
      } else if (inSlot && LEAVES_RUNNING.has(h.event)) {
        inSlot = false;
        changes.push({ at: h.committedAt, delta: -1, runId });
      }
    }
  }
  // At one commit instant, departures first: an admission that saw the slot free committed after it.
  changes.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let running = 0;
  let mostRunning = 0;
  for (const change of changes) {
    running += change.delta;
    mostRunning = Math.max(mostRunning, running);
    if (running > queue.concurrency) {
      violations.push({
        check: 'queues',
        runId: change.runId,
        message: `admitted at ${new Date(change.at).toISOString()} with ${running} runs of queue ${queue.name} running (concurrency ${queue.concurrency})`,
      });
    }
  }
  return { admissions, mostRunning };
}
