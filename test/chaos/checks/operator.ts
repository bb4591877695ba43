import { FINISHED, Check } from './check';
import type { Evidence, HistoryRow, Violation } from './data';

/**
 * Operator actions hold under faults. A cancelled run stays cancelled: nothing completes it, no
 * checkpoint commits after the cancel, and its children are cancelled with it (a child finished before
 * the cancel keeps its end; none is spawned after it). A retried run had failed, and ends. A resume
 * touches only runs an operator resumed.
 */
export const checkOperator: Check = (e) => {
  const violations: Violation[] = [];
  const fail = (runId: string, message: string) => violations.push({ check: 'operator', runId, message });
  const metrics = { cancelled: 0, cascaded: 0, retried: 0, resumed: 0 };
  const resumeTried = new Set(e.operations.filter((o) => o.op === 'resume').map((o) => o.runId));
  const childrenOf = new Map<string, string[]>();
  for (const run of e.runs.values()) if (run.parent_id) childrenOf.set(run.parent_id, [...(childrenOf.get(run.parent_id) ?? []), run.id]);

  for (const [runId, events] of e.history) {
    const cancel = events.find((h) => h.event === 'cancelled' && !h.detail?.cascadedFrom);
    if (cancel) {
      metrics.cancelled++;
      checkCancelled(e, runId, cancel, childrenOf.get(runId) ?? [], fail, () => metrics.cascaded++);
    }
    const retried = events.filter((h) => h.event === 'retried');
    if (retried.length) {
      metrics.retried++;
      if (!events.some((h) => h.event === 'failed' && h.id < retried[0].id)) fail(runId, 'retried without having failed first');
      const status = e.runs.get(runId)?.status;
      if (status !== 'completed' && status !== 'cancelled') fail(runId, `retried, then left ${status ?? 'missing'}`);
    }
    const resumed = events.filter((h) => h.event === 'resumed').length;
    metrics.resumed += resumed;
    if (resumed && !resumeTried.has(runId)) fail(runId, `resumed ${resumed} time(s), but no operator resumed it`);
  }
  return { violations, metrics };
};

function checkCancelled(
  e: Evidence,
  runId: string,
  cancel: HistoryRow,
  children: string[],
  fail: (runId: string, message: string) => void,
  cascaded: () => void,
): void {
  const run = e.runs.get(runId);
  if (run?.status !== 'cancelled') fail(runId, `cancelled (history ${cancel.id}), then ${run?.status ?? 'missing'} at the end`);
  const completed = (e.history.get(runId) ?? []).find((h) => h.event === 'completed' && h.committedAt > cancel.committedAt);
  if (completed) fail(runId, `completed ${(completed.committedAt - cancel.committedAt).toFixed(1)} ms after it was cancelled`);
  for (const [key, step] of e.steps.get(runId) ?? []) {
    if (step.committedAt > cancel.committedAt)
      fail(runId, `checkpoint ${key} committed ${(step.committedAt - cancel.committedAt).toFixed(1)} ms after the run was cancelled`);
  }
  for (const childId of children) {
    const child = e.runs.get(childId)!;
    const history = e.history.get(childId) ?? [];
    const started = history.find((h) => h.event === 'started');
    if (started && started.committedAt > cancel.committedAt)
      fail(
        runId,
        `child ${childId} was spawned ${(started.committedAt - cancel.committedAt).toFixed(1)} ms after its parent was cancelled`,
      );
    if (child.status === 'cancelled') {
      cascaded();
      continue;
    }
    if (!FINISHED.has(child.status)) {
      fail(runId, `child ${childId} is still ${child.status} after its parent was cancelled`);
      continue;
    }
    const end = history.find((h) => h.event === child.status);
    if (end && end.committedAt > cancel.committedAt)
      fail(
        runId,
        `child ${childId} ${child.status} ${(end.committedAt - cancel.committedAt).toFixed(1)} ms after its parent was cancelled`,
      );
  }
}
