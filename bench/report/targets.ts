import { round } from '../stats';
import type { BenchResults } from './results';

/** One target of the issues (8, 14, 18, 20), checked against this run's medians. */
export interface TargetCheck {
  target: string;
  /** The measured value, in the target's unit. */
  value: number | null;
  limit: number;
  unit: string;
  /** null: not measured in this run (see errors). */
  met: boolean | null;
  /** How far past (met) or short of (missed) the limit, in words. */
  margin: string;
}

type Results = Omit<BenchResults, 'targets'>;

export function checkTargets(r: Results): TargetCheck[] {
  const t = r.throughput;
  const ratio = (a?: number, b?: number) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);
  const checks: TargetCheck[] = [];
  const add = (target: string, value: number | undefined, op: '>=' | '<=' | '<', limit: number, unit: string) => {
    if (value === undefined || Number.isNaN(value)) {
      checks.push({ target, value: null, limit, unit, met: null, margin: 'not measured' });
      return;
    }
    const met = op === '>=' ? value >= limit : op === '<=' ? value <= limit : value < limit;
    checks.push({ target, value: round(value, 3), limit, unit, met, margin: marginOf(value, op, limit, unit, met) });
  };
  for (const level of ['c8', 'c64']) {
    add(`throughput at ${level} >= 5x DBOS`, ratio(t[level]?.ours, t[level]?.dbos), '>=', 5, 'x DBOS');
    add(`throughput at ${level} >= 1.0x the floor`, ratio(t[level]?.ours, t[level]?.floor), '>=', 1, 'x floor');
  }
  add('throughput at c64 >= throughput at c8', ratio(t.c64?.ours, t.c8?.ours), '>=', 1, 'x c8');
  add('latency p50 <= 0.34x DBOS', ratio(r.latencyMs.ours?.p50.median, r.latencyMs.dbos?.p50.median), '<=', 0.34, 'x DBOS');
  const signals = r.signalRoundTripMs;
  add(
    'in-process signal round trip p50 <= half of DBOS',
    ratio(signals.inProcess.ours?.p50.median, signals.inProcess.dbos?.p50.median),
    '<=',
    0.5,
    'x DBOS',
  );
  add(
    'select round trip p50 (two arms, one delivered) within 1.2x of the in-process signal round trip',
    ratio(signals.select?.ours?.p50.median, signals.inProcess.ours?.p50.median),
    '<=',
    1.2,
    'x signal',
  );
  add(
    'cross-instance signal round trip p50 no worse than DBOS',
    ratio(signals.crossInstance.ours?.p50.median, signals.crossInstance.dbos?.p50.median),
    '<=',
    1,
    'x DBOS',
  );
  add(
    `parked sleeps (${r.sleepLatenessMs.parked.sleepMs} ms) late <= 50 ms at p95`,
    r.sleepLatenessMs.parked.figures.ours?.p95.median,
    '<=',
    50,
    'ms',
  );
  add('<= 5 write transactions per 3-step workflow', r.perWorkflow.ours?.writeTransactions, '<=', 5, 'transactions');
  add(
    '< 5 write transactions per 3-step workflow, 64 at once (group commit)',
    r.perWorkflow.ours?.concurrent?.writeTransactions,
    '<',
    5,
    'transactions',
  );
  add('<= 8 statements per 3-step workflow', r.perWorkflow.ours?.serverStatements ?? r.perWorkflow.ours?.statements, '<=', 8, 'statements');
  const memory = r.scale.runMemory;
  const parkedRuns = (memory?.runs ?? r.plan.parkedRuns)?.toLocaleString('en-US');
  add(`${parkedRuns} runs started, executed and parked by a worker add < 50 MB (RSS)`, memory?.parked.addedMb.rss, '<', 50, 'MB');
  add(`the same runs, parked, hold < 5 MB of heap`, memory?.parked.addedMb.heapUsed, '<', 5, 'MB');
  add(`the same runs, woken and completed, leave < 5 MB of heap`, memory?.woken.addedMb.heapUsed, '<', 5, 'MB');
  const claim = r.scale.claimQuery;
  add(
    `claim query < 10 ms with ${(claim?.waitingRows ?? r.plan.waitingRows).toLocaleString('en-US')} waiting rows (round trip, the slower of nothing due and a batch due)`,
    claim ? Math.max(claim.noneDue.wallMs.median, claim.batchDue.wallMs.median) : undefined,
    '<',
    10,
    'ms',
  );
  const stats = r.scale.statsRead;
  add(
    `/stats read < 20 ms with ${(stats?.rows ?? r.plan.waitingRows).toLocaleString('en-US')} runs (round trips)`,
    stats?.wallMs.median,
    '<',
    20,
    'ms',
  );
  const keys = r.scale.keysLookup;
  add(
    `lookup by one business key < 5 ms with ${(keys?.runs ?? r.plan.waitingRows).toLocaleString('en-US')} runs of five keys (round trip)`,
    keys?.byOneMs.median,
    '<',
    5,
    'ms',
  );
  add(
    `signalByKeys to ${(keys?.fanOutLarge ?? Math.floor(r.plan.waitingRows / 1_000)).toLocaleString('en-US')} runs < 500 ms (one statement: recorded and woken)`,
    keys?.fanOutLargeMs.median,
    '<',
    500,
    'ms',
  );
  const wakes = r.scale.simultaneousWakes;
  add(
    `${(wakes?.runs ?? r.plan.simultaneousWakes).toLocaleString('en-US')} simultaneous wakes drain with zero duplicate claims`,
    wakes?.duplicateClaims,
    '<=',
    0,
    'duplicates',
  );
  const pass = r.schedules?.passNoneDue;
  add(
    `schedule pass with ${(pass?.schedules ?? r.plan.schedules ?? 10_000).toLocaleString('en-US')} schedules, none due: < 5 ms (round trips)`,
    pass?.wallMs.median,
    '<',
    5,
    'ms',
  );
  const slots = r.schedules?.slotLateness;
  add(
    `${(slots?.schedules ?? r.plan.schedules ?? 10_000).toLocaleString('en-US')} per-minute schedules due at once: slot lateness p95 (run visible) < one sweep interval (${slots?.sweeperMs ?? 1_000} ms)`,
    slots?.latenessMs.p95,
    '<',
    slots?.sweeperMs ?? 1_000,
    'ms',
  );
  add('2 worker processes >= 90% of 1 process (same total concurrency, aggregate)', r.processes?.twoOverOne, '>=', 0.9, 'x one process');
  const retention = r.retention;
  const day = (retention?.runs ?? r.plan.retentionRuns ?? 1_000_000).toLocaleString('en-US');
  add(`retention: dropping the journal of a day of ${day} finished runs < 1 s`, retention?.dropMs, '<', 1_000, 'ms');
  add(
    'retention: workflows running while the day is dropped keep >= 90% of their throughput (not blocked)',
    retention && retention.during.perSecond / retention.before.perSecond,
    '>=',
    0.9,
    'x before',
  );
  const queued = r.queues?.throughput;
  add(`queued throughput at c64 >= 85% of unqueued (same process)`, queued?.ratio, '>=', 0.85, 'x unqueued');
  const admission = r.queues?.admission;
  add(
    `queue admission < 10 ms with ${(admission?.pending ?? 1_000_000).toLocaleString('en-US')} pending runs over ${(admission?.partitions ?? 10_000).toLocaleString('en-US')} partitions (round trip, with a partition limit)`,
    admission?.partitionedMs.median,
    '<',
    10,
    'ms',
  );
  return checks;
}

/** In words: how much room a met target leaves, or how far a missed one is. */
function marginOf(value: number, op: '>=' | '<=' | '<', limit: number, unit: string, met: boolean): string {
  if (limit === 0) return met ? 'met exactly' : `${round(value, 2)} ${unit}, needs 0`;
  if (value === limit) return 'met exactly';
  if (op === '>=')
    return met ? `${round((value / limit - 1) * 100, 0)}% above the target` : `reaches ${round((value / limit) * 100, 0)}% of the target`;
  return met ? `${round((1 - value / limit) * 100, 0)}% under the limit` : `${round(value / limit, 2)}x the limit`;
}
