import { Check, SLACK_MS } from './check';
import type { Violation } from './data';

const UNFINISHED = new Set(['pending', 'running', 'waiting']);

/**
 * Retention deletes only finished runs past their age, and never a child whose parent is unfinished
 * (the parent's `result()` would then find nothing and wait forever). Read from the archive that a
 * trigger fills as rows are deleted (archive.ts): the run as it was, and its parent's status then.
 */
export const checkRetention: Check = (e) => {
  const violations: Violation[] = [];
  const fail = (runId: string, message: string) => violations.push({ check: 'retention', runId, message });
  const ages: Record<string, number | undefined> = {
    completed: e.profile.engine.retention.completedMs,
    cancelled: e.profile.engine.retention.cancelledMs,
  };
  const metrics = { deleted: 0, completed: 0, cancelled: 0, children: 0 };
  for (const run of e.runs.values()) {
    if (!run.deleted_at) continue;
    metrics.deleted++;
    if (run.status === 'completed' || run.status === 'cancelled') metrics[run.status]++;
    if (run.parent_id) metrics.children++;
    const age = ages[run.status];
    if (age === undefined || !run.finished_at) {
      fail(run.id, `deleted while ${run.status}${run.finished_at ? '' : ' (not finished)'}`);
      continue;
    }
    const after = run.deleted_at.getTime() - run.finished_at.getTime();
    if (after < age - SLACK_MS) fail(run.id, `deleted ${after} ms after it ${run.status}, before its age of ${age} ms`);
    if (run.parent_status && UNFINISHED.has(run.parent_status)) {
      fail(run.id, `deleted while its parent ${run.parent_id} was ${run.parent_status} (the parent's result() then finds no child)`);
    }
  }
  return { violations, metrics };
};
