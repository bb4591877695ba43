import { Check, sameJson, startedRuns } from './check';
import { deserialize, Violation } from './data';

/** The child is spawned once (one run, one start in its history) and its result is the one the parent stored. */
export const checkChildren: Check = (e) => {
  const violations: Violation[] = [];
  const children = new Map<string, string[]>();
  for (const run of e.runs.values()) if (run.parent_id) children.set(run.parent_id, [...(children.get(run.parent_id) ?? []), run.id]);
  let spawned = 0;
  for (const runId of startedRuns(e)) {
    if (e.runs.get(runId)?.status !== 'completed') continue;
    const ids = children.get(runId) ?? [];
    const childId = `${runId}/child`;
    if (ids.length !== 1 || ids[0] !== childId) {
      violations.push({ check: 'children', runId, message: `expected one child ${childId}, found ${JSON.stringify(ids)}` });
      continue;
    }
    spawned++;
    const starts = (e.history.get(childId) ?? []).filter((h) => h.event === 'started').length;
    if (starts !== 1) violations.push({ check: 'children', runId, message: `the child was started ${starts} times` });
    const stored = e.steps.get(runId)?.get('child-result:child');
    const child = e.runs.get(childId)!;
    if (!stored || !sameJson(deserialize(stored.result), deserialize(child.output))) {
      violations.push({
        check: 'children',
        runId,
        message: `the parent stored ${stored?.result ?? 'nothing'} as the child's result; the child returned ${child.output}`,
      });
    }
  }
  return { violations, metrics: { spawned } };
};
