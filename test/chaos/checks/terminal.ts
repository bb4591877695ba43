import { cancelsOf, Check, startedRuns } from './check';
import type { Violation } from './data';

/**
 * Every run the schedule planned had its start answered, and every run the driver started, and its
 * child, ends: completed (the workflows never fail for good but at the retry gate, which an operator
 * retry reopens), or cancelled where an operator cancelled it (a run whose cancel was answered must
 * end cancelled; a child ends cancelled only with its parent).
 */
export const checkTerminal: Check = (e) => {
  const violations: Violation[] = [];
  const answered = new Set(e.starts.map((s) => s.runId));
  for (const run of e.planned.filter((r) => !answered.has(r.id)))
    violations.push({
      check: 'terminal',
      runId: run.id,
      message: 'planned, but its start was never answered (the driver did not get to it)',
    });
  for (const s of e.starts.filter((s) => !s.ok))
    violations.push({ check: 'terminal', runId: s.runId, message: `the driver could not start it: ${s.error}` });
  const cancels = cancelsOf(e);
  const ended = { completed: 0, cancelled: 0, children: 0 };
  const expect = (id: string, allowed: string[], optional = false) => {
    const run = e.runs.get(id);
    if (!run && optional) return;
    if (run?.status === 'completed' || run?.status === 'cancelled') ended[run.status]++;
    if (run && allowed.includes(run.status)) return;
    const where = run
      ? `${run.status}, waiting ${JSON.stringify(run.wait)}, wake_at ${run.wake_at?.toISOString() ?? 'none'}, attempt ${run.attempt}`
      : 'no such run';
    violations.push({ check: 'terminal', runId: id, message: `not ${allowed.join(' or ')}: ${where}` });
  };
  for (const id of startedRuns(e)) {
    expect(id, cancels.accepted.has(id) ? ['cancelled'] : cancels.tried.has(id) ? ['completed', 'cancelled'] : ['completed']);
    const parentCancelled = e.runs.get(id)?.status === 'cancelled';
    if (e.runs.has(`${id}/child`)) ended.children++;
    // A parent cancelled before its child step has no child.
    expect(`${id}/child`, parentCancelled ? ['completed', 'cancelled'] : ['completed'], parentCancelled);
  }
  // Transient database errors fail an attempt (the chaos workflows allow many): how many were spent (an operator retry counts one more).
  const attempts = [...e.runs.values()]
    .filter((r) => !(e.history.get(r.id) ?? []).some((h) => h.event === 'retried'))
    .map((r) => r.attempt);
  return {
    violations,
    metrics: { ...ended, retried: attempts.filter((a) => a > 1).length, maxAttempt: attempts.reduce((max, a) => Math.max(max, a), 0) },
  };
};
