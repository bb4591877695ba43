import { Check, startedRuns } from './check';
import type { Violation } from './data';

/**
 * No run is left waiting with a due wake time older than twice the sweep interval: found twice in a
 * row at a quiet moment (every worker and the server up), or still not finished at the end while
 * overdue or parked on something that already arrived.
 */
export const checkStuck: Check = (e) => {
  const violations: Violation[] = e.stuck.map((s) => ({
    check: 'stuck',
    runId: s.runId,
    message: `${s.status} and overdue by ${s.overdueMs} ms at a quiet moment (${new Date(s.at).toISOString()}), waiting ${JSON.stringify(s.wait)}`,
  }));
  const twoSweeps = 2 * e.profile.engine.sweepMs;
  const end = e.samples.reduce((max, s) => Math.max(max, s.at), 0);
  for (const id of startedRuns(e).flatMap((id) => [id, `${id}/child`])) {
    const run = e.runs.get(id);
    if (!run || run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') continue;
    const wait = (run.wait ?? {}) as Record<string, unknown>;
    const arrived =
      (wait.kind === 'signal' && e.signals.has(id)) ||
      (wait.kind === 'channel' && (e.messages.get(id) ?? []).some((m) => !m.acked_at)) ||
      (wait.kind === 'child' && ['completed', 'failed', 'cancelled'].includes(e.runs.get(`${id}/child`)?.status ?? ''));
    if ((run.wake_at && run.wake_at.getTime() < end - twoSweeps) || arrived) {
      violations.push({
        check: 'stuck',
        runId: id,
        message: `left ${run.status} at the end: wake_at ${run.wake_at?.toISOString() ?? 'none'}, waiting ${JSON.stringify(run.wait)}${arrived ? ', which already arrived' : ''}`,
      });
    }
  }
  return { violations, metrics: { stuck: violations.length, quietChecks: e.quietChecks } };
};
