import type { FaultRecord } from '../faults';
import { Check } from './check';
import { pidOf, Violation } from './data';

/** Bound on LISTEN coming back: the listener's longest backoff (10 s) plus a margin. */
const LISTEN_BACK_MS = 15_000;

/**
 * The system comes back from each fault: the runs a killed or stopped worker held are taken over by
 * the others (a killed worker's within a lease and TAKEOVER_SLACK_MS of the kill, unless sessions were
 * cut meanwhile or the others were killed too; a stopped worker's during its stop, unless the server was down or another worker was
 * killed meanwhile, when the stopped one may carry on with it; a run an operator cancelled before its
 * takeover was due needs none), and after a connection cut or a server restart every
 * worker LISTENs again. Measures each fault's recovery.
 */
export const checkRecovery: Check = (e) => {
  const violations: Violation[] = [];
  let slowest = { ms: 0, what: '-' };
  const recovered = (f: FaultRecord, ms: number) => {
    if (ms > slowest.ms) slowest = { ms, what: `${f.kind} (phase ${f.phase}${f.pid ? `, pid ${f.pid}` : ''})` };
  };
  for (const f of e.faults.filter((f) => !f.skipped)) {
    if (f.kind === 'kill' || f.kind === 'pause') {
      // A kill's takeover is due a lease and more after it: a restart in that time delays it too.
      const reach = f.kind === 'kill' ? { at: f.at, endAt: f.endAt + e.profile.engine.leaseMs + TAKEOVER_SLACK_MS } : f;
      const serverDown = e.faults.some((r) => r.kind === 'restart' && overlaps(r, reach));
      for (const runId of f.held ?? []) {
        const takeover = (e.history.get(runId) ?? []).find(
          (h) => h.event === 'lease-taken-over' && pidOf(h.detail?.previousOwner) === f.pid && h.at.getTime() >= f.at - 50,
        );
        const ms = takeover && takeover.at.getTime() - f.at;
        // An operator's cancel before anyone had to take the run over closes it: nothing is left to take
        // over. A stopped worker's run is due during the stop; a killed one's once its lease has lapsed.
        const dueBy = f.endAt + (f.kind === 'kill' ? e.profile.engine.leaseMs + TAKEOVER_SLACK_MS : 0);
        const cancelled = (e.history.get(runId) ?? []).some(
          (h) => h.event === 'cancelled' && h.at.getTime() >= f.at - 50 && h.at.getTime() <= dueBy,
        );
        if (ms === undefined && cancelled) continue;
        // With the server down, or the other workers killed meanwhile, no one may have been there to take it
        // over: the stopped worker carries on after SIGCONT with its token (the stuck check sees it end).
        if (ms === undefined && f.kind === 'pause' && (serverDown || otherWorkerKilled(e.faults, f))) continue;
        if (ms === undefined)
          violations.push({
            check: 'recovery',
            runId,
            message: `held by the ${f.kind === 'kill' ? 'killed' : 'stopped'} pid ${f.pid}, never taken over`,
          });
        else if (f.kind === 'pause' && !serverDown && takeover!.at.getTime() > f.endAt) {
          violations.push({
            check: 'recovery',
            runId,
            message: `held by pid ${f.pid}, stopped for ${f.endAt - f.at} ms, taken over only ${ms} ms after the stop`,
          });
        } else if (
          f.kind === 'kill' &&
          !serverDown &&
          !cutMeanwhile(e.faults, f, dueBy) &&
          takeover!.at.getTime() > dueBy + bootOf(e.faults, f)
        ) {
          violations.push({
            check: 'recovery',
            runId,
            message: `held by the killed pid ${f.pid}, taken over only ${ms} ms after the kill (its lease ${e.profile.engine.leaseMs} ms)`,
          });
        } else recovered(f, ms);
      }
    } else {
      if (f.listenBackAt === undefined || f.listenBackAt - f.endAt > LISTEN_BACK_MS) {
        violations.push({
          check: 'recovery',
          message: `after the ${f.kind} of phase ${f.phase} at ${new Date(f.endAt).toISOString()}, LISTEN was not back within ${LISTEN_BACK_MS} ms`,
        });
      } else recovered(f, f.listenBackAt - f.endAt);
    }
  }
  return { violations, metrics: { slowestMs: slowest.ms, slowest: slowest.what } };
};

const overlaps = (a: Pick<FaultRecord, 'at' | 'endAt'>, b: Pick<FaultRecord, 'at' | 'endAt'>) => a.at < b.endAt && a.endAt > b.at;

/** Sessions were cut between the kill and its takeover's due time: a claim pass cut off may leave the run to the next one. */
const cutMeanwhile = (faults: FaultRecord[], f: FaultRecord, dueBy: number) =>
  faults.some((c) => c.kind === 'connections' && !c.skipped && overlaps(c, { at: f.at, endAt: dueBy }));

/** With the other workers killed too, the takeover waits for a replacement's boot. */
const bootOf = (faults: FaultRecord[], f: FaultRecord) => (otherWorkerKilled(faults, f) ? BOOT_MS : 0);

/** Another worker was killed while this one was stopped (a kill's record ends when it is gone: allow its boot). */
const otherWorkerKilled = (faults: FaultRecord[], f: FaultRecord) =>
  faults.some((k) => k.kind === 'kill' && !k.skipped && k.worker !== f.worker && k.at < f.endAt && k.endAt + BOOT_MS > f.at);

/** After a killed worker's lease lapses: a sweep or claim pass on a busy machine. */
const TAKEOVER_SLACK_MS = 3_000;

/** A generous bound on a killed worker's restart and boot on a busy machine. */
const BOOT_MS = 15_000;
