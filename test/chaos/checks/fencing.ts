import { Check } from './check';
import { pidOf, storedEffect, Violation } from './data';

const CLAIMS = new Set(['claimed', 'lease-taken-over']);
/** History events only the lease holder writes, each fenced by its token. */
const WORKER_WRITES = new Set(['parked', 'retry-scheduled', 'completed', 'failed']);

/**
 * A worker whose lease was taken over writes nothing more to that run until it claims it again: no
 * step checkpoint (its effect names its pid; ordered by commit time against the takeover) and no
 * park or end (its history row names it as actor; ordered by history id).
 */
export const checkFencing: Check = (e) => {
  const violations: Violation[] = [];
  let takeovers = 0;
  let ownTakeovers = 0;
  for (const [runId, events] of e.history) {
    for (const takeover of events.filter((h) => h.event === 'lease-taken-over' && h.detail?.previousOwner)) {
      takeovers++;
      const owner = takeover.detail!.previousOwner as string;
      if (takeover.actor === owner) ownTakeovers++;
      // A worker may take over its own lapsed lease (renewals failed): the takeover is then its reclaim,
      // and the stale execution inside the same process cannot be told apart by pid or actor.
      const firstReclaim = events.find((h) => CLAIMS.has(h.event) && h.actor === owner && h.id >= takeover.id);
      for (const late of events.filter((h) => WORKER_WRITES.has(h.event) && h.actor === owner && h.id > takeover.id)) {
        if (!firstReclaim || late.id < firstReclaim.id) {
          violations.push({
            check: 'fencing',
            runId,
            message: `${late.event} written by ${owner} after its lease was taken over (history ${takeover.id} → ${late.id})`,
          });
        }
      }
      const pid = pidOf(owner);
      for (const [key, step] of e.steps.get(runId) ?? []) {
        if (storedEffect(step)?.pid !== pid || step.committedAt <= takeover.committedAt) continue;
        if (firstReclaim && firstReclaim.committedAt <= step.committedAt) continue;
        violations.push({
          check: 'fencing',
          runId,
          message: `checkpoint ${key} by pid ${pid} committed ${(step.committedAt - takeover.committedAt).toFixed(1)} ms after its lease was taken over`,
        });
      }
    }
  }
  return { violations, metrics: { takeovers, ownTakeovers } };
};
