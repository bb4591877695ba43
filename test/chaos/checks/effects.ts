import type { FaultRecord } from '../faults';
import { Check } from './check';
import { Evidence, LedgerRow, storedEffect, Violation } from './data';

type Cause = FaultRecord['kind'];

/**
 * Each step with a stored checkpoint ran exactly once, except re-runs in the crash window: its
 * checkpoint names the ledger row that won; every other row for that step is a re-run, and must be
 * explained by a fault that struck its process between that effect and its checkpoint.
 */
export const checkEffects: Check = (e) => {
  const violations: Violation[] = [];
  const inWindow: Record<Cause, number> = { kill: 0, pause: 0, connections: 0, restart: 0 };
  let outside = 0;
  let steps = 0;
  const spent = new Set<string>();
  for (const [runId, byKey] of e.ledger) {
    const completed = e.runs.get(runId)?.status === 'completed';
    for (const [key, rows] of byKey) {
      const effect = storedEffect(e.steps.get(runId)?.get(key));
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
      for (const row of rows) {
        if (row === winner) continue;
        const fault = explain(e, row, spent);
        if (fault) inWindow[fault.kind]++;
        else {
          outside++;
          violations.push({
            check: 'effects',
            runId,
            message: `step ${key} ran again outside any crash window: effect ${row.id} by pid ${row.pid} at ${row.at.toISOString()} lost to ${winner.id} by pid ${winner.pid}, and no fault explains it (a kill or stop of pid ${row.pid} accounts for one unconfirmed effect per run, a server fault for those around it)`,
          });
        }
      }
    }
  }
  const total = Object.values(inWindow).reduce((a, b) => a + b, 0);
  return {
    violations,
    metrics: { steps, inWindow: total, ...Object.fromEntries(Object.entries(inWindow).map(([k, v]) => [`inWindow.${k}`, v])), outside },
  };
};

/**
 * The fault that let this effect go unconfirmed: its process was killed after writing it; or stopped
 * around it (the lease went to another worker, and the step it had in flight finished late); or the
 * server or its sessions failed while its checkpoint was on the way or while its lease lapsed (a
 * failed checkpoint write fails the attempt, and the retry runs the step again). A killed or stopped
 * process had one step in flight per run, so it explains one extra effect per run, no more: `spent`
 * remembers which (fault, run) pairs are used up.
 */
export function explain(e: Evidence, row: LedgerRow, spent: Set<string>): FaultRecord | undefined {
  const at = row.at.getTime();
  const leaseMs = e.profile.engine.leaseMs;
  const matches = (f: FaultRecord): boolean => {
    if (f.skipped) return false;
    switch (f.kind) {
      case 'kill':
        return f.pid === row.pid && f.at >= at - 50;
      case 'pause':
        return f.pid === row.pid && at >= f.at - 3_000 && at <= f.endAt + 2_000;
      case 'connections':
      case 'restart':
        return at >= f.at - 3_000 && at <= f.endAt + leaseMs + 2_000;
    }
  };
  for (const [index, f] of e.faults.entries()) {
    if (!matches(f)) continue;
    if (f.kind === 'connections' || f.kind === 'restart') return f;
    const key = `${index}:${row.run_id}`;
    if (spent.has(key)) continue;
    spent.add(key);
    return f;
  }
  return undefined;
}
