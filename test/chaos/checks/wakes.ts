import { Check } from './check';
import type { Evidence, HistoryRow, Violation } from './data';

/**
 * Waking degrades to the sweeper when LISTEN is gone, and recovers: the latency from a delivery to
 * the claim of the run parked on it, split by whether every worker that was up was LISTENing at the moment
 * of delivery. A wake left to the sweeper takes at most about one sweep interval (any worker's next
 * sweep claims it); a bound of twice that plus a margin catches a wake that nobody picked up. A
 * claim made by the delivery itself (deliver-and-claim, from the sender that runs a worker) is
 * counted apart: it is not a wake that travelled.
 */
export const checkWakes: Check = (e) => {
  const violations: Violation[] = [];
  const buckets: Record<'up' | 'down', number[]> = { up: [], down: [] };
  let claimedByDelivery = 0;
  const bound = 2 * e.profile.engine.sweepMs + 1_000;
  for (const [runId, events] of e.history) {
    events.forEach((delivery, i) => {
      if (delivery.event !== 'signal-delivered' && delivery.event !== 'message-sent') return;
      const before = events
        .slice(0, i)
        .reverse()
        .find((h) => h.event !== 'signal-delivered' && h.event !== 'message-sent');
      if (before?.event !== 'parked' || !waitsFor(before, delivery)) return;
      const claim = events.slice(i + 1).find((h) => h.event === 'claimed' || h.event === 'lease-taken-over');
      if (!claim) return;
      if (claim.event === 'claimed' && claim.detail?.by) {
        claimedByDelivery++;
        return;
      }
      const at = delivery.at.getTime();
      const state = listenAt(e, at);
      if (!state || disturbed(e, at)) return; // a fault on a worker or the server at that moment: not a measure of waking
      const ms = claim.at.getTime() - at;
      buckets[state].push(ms);
      if (ms > bound)
        violations.push({
          check: 'wakes',
          runId,
          message: `woken ${ms} ms after its ${delivery.event} (LISTEN ${state}), over ${bound} ms`,
        });
    });
  }
  return { violations, metrics: { ...summary('up', buckets.up), ...summary('down', buckets.down), claimedByDelivery } };
};

function waitsFor(parked: HistoryRow, delivery: HistoryRow): boolean {
  const wait = parked.detail ?? {};
  return delivery.event === 'signal-delivered' ? wait.kind === 'signal' && wait.name === delivery.detail?.name : wait.kind === 'channel';
}

/** 'up' when every worker that was up LISTENed at the last sample before `at`, 'down' when none did. */
function listenAt(e: Evidence, at: number): 'up' | 'down' | undefined {
  let lo = 0;
  let hi = e.samples.length - 1;
  if (hi < 0 || e.samples[0].at > at) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (e.samples[mid].at <= at) lo = mid;
    else hi = mid - 1;
  }
  const s = e.samples[lo];
  if (at - s.at > 500 || s.up === 0) return undefined;
  return s.listeners >= s.up ? 'up' : s.listeners === 0 ? 'down' : undefined;
}

/**
 * A worker killed, stopped or booting, the server restarting, or the workers' pools being cut, around
 * `at`: claims may wait on those (a claim whose session is cut fails and the next sweep tries again),
 * not on waking. A burst that cuts only the senders', or only LISTEN after the last cut, measures waking.
 */
function disturbed(e: Evidence, at: number): boolean {
  return e.faults.some((f) => {
    if (f.kind === 'kill' || f.kind === 'pause' || f.kind === 'restart')
      return at >= f.at - 1_000 && at <= f.endAt + e.profile.engine.leaseMs + 1_000;
    return f.kind === 'connections' && f.targets !== 'senders' && at >= f.at - 1_000 && at <= (f.lastCutAt ?? f.endAt) + 1_000;
  });
}

function summary(name: string, values: number[]): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : 0);
  return {
    [`${name}.n`]: sorted.length,
    [`${name}.p50`]: q(0.5),
    [`${name}.p95`]: q(0.95),
    [`${name}.max`]: sorted.length ? sorted[sorted.length - 1] : 0,
  };
}
