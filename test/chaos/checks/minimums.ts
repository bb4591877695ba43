import type { Minimums } from '../profiles';
import type { CheckResult } from './check';
import { CHAOS_ORDER_QUEUE } from '../chaos.workflows';
import { Evidence, storedEffect, Violation } from './data';

/** What each minimum counts, as the report names it. */
export const MINIMUM_LABELS: Record<keyof Minimums, string> = {
  kill: 'kills',
  pause: 'stops',
  connections: 'connection bursts',
  restart: 'server restarts',
  killsInStep: 'kills inside a step (after its effect, before its checkpoint)',
  takeovers: 'lease takeovers',
  deliveriesDuringFaults: 'deliveries made while a fault was on',
  timers: 'timers checked',
  children: 'children checked',
  messagesHandled: 'channel messages handled',
  batchedCheckpoints: 'checkpoints committed in one batch with others (group commit)',
  batchedStarts: 'starts committed in one batch with others (group commit)',
  batchedQueuedStarts: 'queued starts committed in one batch with others, each in a slot it took there',
  killsInBatch: 'kills while a group-commit batch of the worker ran on the server',
  cutsInBatch: 'sessions cut while they ran a group-commit batch',
};

/**
 * No session passes vacuously: it must have struck, and checked, at least the profile's minimums
 * (per cycle of phases: see profiles.ts), counted from what happened, not from what was planned. A
 * kill counts as inside a step when it was cued by a step's effect and that step had not committed
 * its checkpoint with that effect before the kill. A delivery counts as made during a fault when its
 * request (first try to answer) overlapped a fault. Reads the other checks' counts (`results`).
 */
export function checkMinimums(e: Evidence, results: Record<'fencing' | 'timers' | 'children' | 'channels', CheckResult>): CheckResult {
  const faults = e.faults.filter((f) => !f.skipped);
  const ofKind = (kind: string) => faults.filter((f) => f.kind === kind).length;
  const counts: Record<keyof Minimums, number> = {
    kill: ofKind('kill'),
    pause: ofKind('pause'),
    connections: ofKind('connections'),
    restart: ofKind('restart'),
    killsInStep: faults.filter((f) => {
      if (f.kind !== 'kill' || !f.inWindow) return false;
      const step = e.steps.get(f.inWindow.runId)?.get(f.inWindow.stepKey);
      return !(storedEffect(step)?.ledgerId === f.inWindow.ledgerId && step!.committedAt < f.at);
    }).length,
    takeovers: Number(results.fencing.metrics.takeovers),
    deliveriesDuringFaults: e.deliveries.filter((d) => d.tx !== 'rollback' && faults.some((f) => d.sentAt <= f.endAt && d.doneAt >= f.at))
      .length,
    timers: Number(results.timers.metrics.timers),
    children: Number(results.children.metrics.spawned),
    messagesHandled: Number(results.channels.metrics.handled),
    batchedCheckpoints: batchedCheckpoints(e),
    batchedStarts: batchedStarts(e),
    batchedQueuedStarts: batchedStarts(e, CHAOS_ORDER_QUEUE.name),
    killsInBatch: faults.filter((f) => f.kind === 'kill' && f.inBatch).length,
    cutsInBatch: faults.reduce((n, f) => n + (f.kind === 'connections' ? (f.inBatch ?? 0) : 0), 0),
  };
  const cycles = Math.max(1, Math.floor(e.phases / e.profile.cycle.length));
  const violations: Violation[] = [];
  const metrics: Record<string, number> = { cycles };
  for (const key of Object.keys(counts) as Array<keyof Minimums>) {
    const least = e.profile.minimums[key] * cycles;
    metrics[key] = counts[key];
    metrics[`${key}.min`] = least;
    if (counts[key] < least)
      violations.push({
        check: 'minimums',
        message: `${MINIMUM_LABELS[key]}: ${counts[key]}, below the ${least} that ${cycles} cycle(s) of the ${e.profile.name} profile must reach; the session proves too little to pass`,
      });
  }
  return { violations, metrics };
}

/**
 * Checkpoints that went out in a batch with others: rows one transaction committed share its commit
 * timestamp (µs), and only group commit writes several steps rows in one transaction here (the
 * workload forks nothing). The faults strike batches as they strike single writes, and the other
 * checks hold them to the same promises.
 */
function batchedCheckpoints(e: Evidence): number {
  return sharingCommits([...e.steps.values()].flatMap((steps) => [...steps.values()]));
}

/**
 * Runs whose `started` history row shares its commit with another's: only group commit starts several
 * runs in one transaction here. With `queue`, those whose row says they took a slot of it there.
 */
function batchedStarts(e: Evidence, queue?: string): number {
  const started = [...e.history.values()].flatMap((rows) => rows.filter((h) => h.event === 'started'));
  return sharingCommits(started, queue === undefined ? undefined : (h) => h.detail?.queue === queue);
}

/** Rows committed in one transaction with others (their commit timestamps, µs, are equal); with `counted`, only those it picks. */
function sharingCommits<R extends { committedAt: number }>(rows: R[], counted: (row: R) => boolean = () => true): number {
  const commits = new Map<number, number>();
  for (const row of rows) commits.set(row.committedAt, (commits.get(row.committedAt) ?? 0) + 1);
  return rows.filter((row) => commits.get(row.committedAt)! > 1 && counted(row)).length;
}
