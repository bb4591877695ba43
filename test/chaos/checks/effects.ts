import { executes } from '../chaos.app';
import type { FaultRecord } from '../faults';
import { Check, ORDER_MS } from './check';
import { Evidence, LedgerRow, pidOf, storedEffect, Violation } from './data';

type Cause = FaultRecord['kind'];

/**
 * How long after an effect its checkpoint may commit when nothing goes wrong: the slow steps hold
 * 250 ms between the two, and the write takes a few ms (a `ci` session measures p99 about 260 ms,
 * the report prints it), up to a second on a loaded machine. A fault later than this after an effect
 * cannot be why that effect went unconfirmed.
 */
export const CRASH_MS = 1_000;

/**
 * After a fault's reach ends, how long the attempt it struck may still write its effect: a statement
 * the killed process had already sent; the step a stopped process had in flight, finished after
 * SIGCONT (with every timer it owed firing first); the step a process cut off from the server had
 * begun before it learnt its lease was gone.
 */
export const AFTER_MS: Record<Cause, number> = { kill: 250, pause: 1_000, connections: 500, restart: 500 };

/**
 * Each step with a stored checkpoint ran exactly once, except re-runs in a crash window: its
 * checkpoint names the ledger row that won; every other row for that step is a re-run, and must be
 * explained by a fault that struck the process that wrote it while that attempt was in its crash
 * window (see `explain`). Measures which share of the executing processes' time such windows cover:
 * a duplicate there would be excused, wrongly or not.
 */
export const checkEffects: Check = (e) => {
  const violations: Violation[] = [];
  const inWindow: Record<Cause, number> = { kill: 0, pause: 0, connections: 0, restart: 0 };
  let outside = 0;
  let steps = 0;
  const latencies: number[] = [];
  const spent = new Set<string>();
  for (const [runId, byKey] of e.ledger) {
    const completed = e.runs.get(runId)?.status === 'completed';
    for (const [key, rows] of byKey) {
      const step = e.steps.get(runId)?.get(key);
      const effect = storedEffect(step);
      if (!effect) {
        if (completed)
          violations.push({
            check: 'effects',
            runId,
            message: `step ${key} has ${rows.length} effect(s) and no checkpoint in a completed run`,
          });
        continue;
      }
      steps++;
      const winner = rows.find((r) => r.id === effect.ledgerId);
      if (!winner || winner.pid !== effect.pid) {
        violations.push({
          check: 'effects',
          runId,
          message: `step ${key}: the checkpoint names ledger row ${effect.ledgerId} (pid ${effect.pid}), which is not one of its effects`,
        });
        continue;
      }
      latencies.push(step!.committedAt - winner.at.getTime());
      for (const row of rows) {
        if (row === winner) continue;
        const fault = explain(e, row, step!.committedAt, spent);
        if (fault) inWindow[fault.kind]++;
        else {
          outside++;
          violations.push({
            check: 'effects',
            runId,
            message: `step ${key} ran again outside any crash window: effect ${row.id} by pid ${row.pid} at ${row.at.toISOString()} lost to ${winner.id} by pid ${winner.pid} (checkpoint committed at ${new Date(step!.committedAt).toISOString()}), and no fault on pid ${row.pid} struck between that effect and the checkpoint or the takeover of its run`,
          });
        }
      }
    }
  }
  const total = Object.values(inWindow).reduce((a, b) => a + b, 0);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => (latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]) : 0);
  return {
    violations,
    metrics: {
      steps,
      inWindow: total,
      ...Object.fromEntries(Object.entries(inWindow).map(([k, v]) => [`inWindow.${k}`, v])),
      outside,
      'checkpoint.p50': q(0.5),
      'checkpoint.p99': q(0.99),
      'checkpoint.max': latencies.length ? Math.round(latencies[latencies.length - 1]) : 0,
      ...coverage(e),
    },
  };
};

/**
 * The fault that let this effect go unconfirmed, if any. It must have struck the process that wrote
 * the effect (its pid killed or stopped; its sessions cut, as a worker or as the sender that executes;
 * or the server restarted under everyone), and struck it inside the effect's crash window:
 * - not later than CRASH_MS after the effect (its checkpoint would have committed by then);
 * - not ended more than AFTER_MS before the effect (a connection fault or a restart reaches one
 *   renewal further: see `reachEnd`);
 * - before the run moved on without it: before the stored checkpoint committed, and before the lease
 *   takeover that ended the hold under which the effect was written (the fault must have caused it).
 * A killed or stopped process had each step of a run in flight at most once (parallel steps, such as
 * the workload's notify-* fan-out, are each in flight), so a kill or a stop explains one extra effect
 * per step of a run, no more: `spent` remembers which (fault, run, step) triples are used up.
 */
export function explain(e: Evidence, row: LedgerRow, checkpointAt: number, spent: Set<string>): FaultRecord | undefined {
  const at = row.at.getTime();
  const role = e.processes.find((p) => p.pid === row.pid)?.role;
  const end = Math.min(checkpointAt, takeoverOf(e, row) ?? Infinity);
  for (const [index, f] of e.faults.entries()) {
    if (f.skipped || !struck(f, row.pid, role)) continue;
    if (f.at > at + CRASH_MS || f.at > end + ORDER_MS || reachEnd(e, f) + AFTER_MS[f.kind] < at) continue;
    if (f.kind === 'connections' || f.kind === 'restart') return f;
    const key = `${index}:${row.run_id}:${row.step_key}`;
    if (spent.has(key)) continue;
    spent.add(key);
    return f;
  }
  return undefined;
}

/** Whether the fault struck the process with this pid (and role, when the fleet knew it). */
function struck(f: FaultRecord, pid: number, role: string | undefined): boolean {
  switch (f.kind) {
    case 'kill':
    case 'pause':
      return f.pid === pid;
    case 'connections':
      if (!role) return false;
      return f.targets === 'both' || (f.targets === 'workers' ? role.startsWith('worker-') : role.startsWith('sender-'));
    case 'restart':
      return true;
  }
}

/**
 * Until when a fault held its process back: a kill until the process was gone, a stop until SIGCONT;
 * a connection fault or a restart until one renewal after its last cut or the server's return (a
 * lease whose renewals failed meanwhile may have lapsed and been taken over; the worker learns it at
 * its next renewal, every third of a lease, as durable.worker.ts renews).
 */
function reachEnd(e: Evidence, f: FaultRecord): number {
  const renewEveryMs = Math.max(200, Math.floor(e.profile.engine.leaseMs / 3));
  switch (f.kind) {
    case 'kill':
    case 'pause':
      return f.endAt;
    case 'connections':
      return (f.lastCutAt ?? f.endAt) + renewEveryMs;
    case 'restart':
      return f.endAt + renewEveryMs;
  }
}

/**
 * The commit of the takeover that ended the hold under which this effect was written: the first
 * `lease-taken-over` from the effect's pid after that pid's last claim of the run before the effect.
 */
function takeoverOf(e: Evidence, row: LedgerRow): number | undefined {
  const events = e.history.get(row.run_id) ?? [];
  const at = row.at.getTime();
  const claim = events.filter(
    (h) => (h.event === 'claimed' || h.event === 'lease-taken-over') && pidOf(h.actor) === row.pid && h.committedAt <= at + ORDER_MS,
  );
  const since = claim.length ? claim[claim.length - 1].committedAt : -Infinity;
  return events.find((h) => h.event === 'lease-taken-over' && pidOf(h.detail?.previousOwner) === row.pid && h.committedAt > since)
    ?.committedAt;
}

/**
 * Which share of the executing processes' lives the crash windows of the faults cover: for each
 * process, the instants at which an effect it wrote could be excused by a fault that struck it
 * (from CRASH_MS before the fault to AFTER_MS past its reach), over its life (until the last sample).
 */
function coverage(e: Evidence): Record<string, number> {
  const end = e.samples.reduce((max, s) => Math.max(max, s.at), 0);
  let life = 0;
  const covered: Record<Cause | 'all', number> = { all: 0, kill: 0, pause: 0, connections: 0, restart: 0 };
  for (const p of e.processes.filter((p) => executes(p.role))) {
    const from = p.readyAt;
    const to = Math.min(p.exitedAt ?? end, end);
    if (to <= from) continue;
    life += to - from;
    const windows = e.faults
      .filter((f) => !f.skipped && struck(f, p.pid, p.role))
      .map((f) => ({ kind: f.kind, from: Math.max(from, f.at - CRASH_MS), to: Math.min(to, reachEnd(e, f) + AFTER_MS[f.kind]) }))
      .filter((w) => w.to > w.from);
    covered.all += union(windows);
    for (const kind of ['kill', 'pause', 'connections', 'restart'] as const) covered[kind] += union(windows.filter((w) => w.kind === kind));
  }
  const share = (ms: number) => (life ? Math.round((1000 * ms) / life) / 10 : 0);
  return Object.fromEntries([
    ['coverage', share(covered.all)],
    ...(['kill', 'pause', 'connections', 'restart'] as const).map((k) => [`coverage.${k}`, share(covered[k])]),
  ]);
}

/** The length of a union of intervals. */
function union(windows: Array<{ from: number; to: number }>): number {
  let total = 0;
  let reach = -Infinity;
  for (const w of [...windows].sort((a, b) => a.from - b.from)) {
    if (w.to <= reach) continue;
    total += w.to - Math.max(w.from, reach);
    reach = w.to;
  }
  return total;
}
