import { Check, startedRuns } from './check';
import type { Violation } from './data';

/** Every run the driver started, and its child, ends completed (the workflows never fail by design). */
export const checkTerminal: Check = (e) => {
  const violations: Violation[] = [];
  for (const s of e.starts.filter((s) => !s.ok)) violations.push({ check: 'terminal', runId: s.runId, message: `the driver could not start it: ${s.error}` });
  let completed = 0;
  for (const id of startedRuns(e).flatMap((id) => [id, `${id}/child`])) {
    const run = e.runs.get(id);
    if (run?.status === 'completed') completed++;
    else {
      const where = run ? `${run.status}, waiting ${JSON.stringify(run.wait)}, wake_at ${run.wake_at?.toISOString() ?? 'none'}, attempt ${run.attempt}` : 'no such run';
      violations.push({ check: 'terminal', runId: id, message: `not completed: ${where}` });
    }
  }
  // Transient database errors fail an attempt (the chaos workflows allow many): how many were spent.
  const attempts = [...e.runs.values()].map((r) => r.attempt);
  return { violations, metrics: { completed, retried: attempts.filter((a) => a > 1).length, maxAttempt: attempts.reduce((max, a) => Math.max(max, a), 0) } };
};
