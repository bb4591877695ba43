import { Client } from 'pg';
import type { BenchContext } from '../context';
import { sampleLockWaits } from '../lock-waits';
import { postmasterPid, serverCpuMs } from '../server-cpu';
import { median, Spread, spread } from '../stats';

/** Worker processes on one database, at the same total concurrency. */
const PROCESS_COUNTS = [1, 2, 4];

export interface ProcessFigures {
  /** Total callers (and executing runs) over all processes. */
  concurrency: number;
  /**
   * By process count ("p2"): aggregate workflows per second, sessions seen waiting on a lock per sample,
   * and the CPU time of every Postgres process per workflow (µs; where the server's processes can be read).
   */
  byProcesses: Record<string, { perSecond: Spread; lockWaits: Spread; serverCpuUs?: Spread }>;
  /** Two processes against one: the median of the rounds' ratios (each round ran 1, 2 and 4 processes in turn). */
  twoOverOne?: number;
}

/**
 * ours as a deployment grows on one server: 1, 2 and 4 worker processes at the same total
 * concurrency (each `concurrency / n` callers and worker slots), each starting and awaiting 3-step
 * workflows in a closed loop, all at once; the aggregate is the sum of their rates. Sessions waiting
 * on a lock are sampled from pg_stat_activity meanwhile, so contention between processes would show,
 * and the server's CPU is read from /proc before and after, for what one workflow costs Postgres.
 */
export async function measureProcesses(ctx: BenchContext): Promise<ProcessFigures> {
  const { plan } = ctx;
  const concurrency = plan.workerConcurrency;
  const byProcesses: ProcessFigures['byProcesses'] = {};
  let twoOverOne: number | undefined;
  const db = new Client(ctx.url('ours'));
  await db.connect();
  const postmaster = await postmasterPid(ctx.server).catch(() => undefined);
  try {
    const collected = new Map(PROCESS_COUNTS.map((n) => [n, { rates: [] as number[], waits: [] as number[], cpu: [] as number[] }]));
    // Rounds of 1, 2 and 4 processes one after another, not all of one count then the next: the machine's
    // speed drifts over minutes, and each round's counts then meet the same machine.
    const failed = new Set<number>();
    const ratios: number[] = [];
    for (let rep = 0; rep < plan.reps; rep++) {
      const roundRates = new Map<number, number>();
      for (const n of PROCESS_COUNTS) {
        if (failed.has(n)) continue;
        const each = concurrency / n;
        const into = collected.get(n)!;
        const figure = await ctx.attempt(`processes.p${n}`, () =>
          ctx.with(
            Array.from({ length: n }, () => ({ kind: 'ours' as const, concurrency: each })),
            async (...peers) => {
              await Promise.all(peers.map((peer) => peer.call('loop', { concurrency: each, durationMs: plan.warmupMs })));
              const sampler = sampleLockWaits(db, 100);
              const cpuBefore = postmaster === undefined ? undefined : serverCpuMs(postmaster);
              const loops = await Promise.all(peers.map((peer) => peer.call('loop', { concurrency: each, durationMs: plan.throughputMs })));
              const cpuMs = cpuBefore === undefined ? undefined : serverCpuMs(postmaster!) - cpuBefore;
              const samples = await sampler.stop();
              const completed = loops.reduce((sum, loop) => sum + loop.completed, 0);
              return {
                perSecond: loops.reduce((sum, loop) => sum + loop.perSecond, 0),
                lockWaits: mean(samples),
                serverCpuUs: cpuMs === undefined ? undefined : (cpuMs * 1000) / completed,
              };
            },
          ),
        );
        if (!figure) {
          failed.add(n);
          continue;
        }
        roundRates.set(n, figure.perSecond);
        into.rates.push(figure.perSecond);
        into.waits.push(figure.lockWaits);
        if (figure.serverCpuUs !== undefined) into.cpu.push(figure.serverCpuUs);
        ctx.log(
          `  ${n} process(es) × c${each} #${rep + 1}: ${figure.perSecond.toFixed(0)} /s, ${figure.lockWaits.toFixed(2)} sessions waiting on a lock, ${figure.serverCpuUs?.toFixed(0) ?? 'n/a'} µs of Postgres CPU per workflow`,
        );
      }
      // Each round's two processes against its one process: the pair met the same machine.
      if (roundRates.has(1) && roundRates.has(2)) ratios.push(roundRates.get(2)! / roundRates.get(1)!);
    }
    for (const [n, { rates, waits, cpu }] of collected) {
      if (rates.length)
        byProcesses[`p${n}`] = { perSecond: spread(rates), lockWaits: spread(waits), ...(cpu.length ? { serverCpuUs: spread(cpu) } : {}) };
    }
    if (ratios.length) twoOverOne = median(ratios); // compared unrounded: 0.8995 must not pass 0.9
  } finally {
    await db.end();
  }
  return { concurrency, byProcesses, twoOverOne };
}

function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}
