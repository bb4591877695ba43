import type { BenchContext } from '../context';
import type { PeerKind } from '../peers/peer';
import { Spread, spread } from '../stats';

export const SYSTEMS = ['ours', 'dbos', 'floor'] as const;
export type System = (typeof SYSTEMS)[number];

/** Per concurrency level ("c8"), per peer: completed units per second. */
export type RateTable<K extends string> = Record<string, Partial<Record<K, Spread>>>;

/**
 * 3-step workflows started and awaited in one process by `c` callers in a closed loop, for
 * c = 1, 8, 64: workflows per second (steps per second is three times that). Each repetition is a
 * fresh process per system that warms up at each level before its measured loop.
 */
export function measureThroughput(ctx: BenchContext): Promise<RateTable<System>> {
  return rates(ctx, 'throughput', SYSTEMS, ctx.plan.concurrencies);
}

/** The server's commit ceiling on the same loop: single-row jsonb inserts from 1 and 8 clients. */
export function measureCeiling(ctx: BenchContext): Promise<RateTable<'ceiling'>> {
  return rates(ctx, 'ceiling', ['ceiling'] as const, [1, 8]);
}

async function rates<K extends PeerKind>(
  ctx: BenchContext,
  name: string,
  kinds: readonly K[],
  concurrencies: number[],
): Promise<RateTable<K>> {
  const { plan } = ctx;
  const reps = await ctx.rounds(
    name,
    kinds,
    plan.throughputReps,
    (kind) => [{ kind, concurrency: plan.workerConcurrency }],
    async (kind, [peer], rep) => {
      const perLevel: Record<string, number> = {};
      for (const concurrency of concurrencies) {
        await peer.call('loop', { concurrency, durationMs: plan.warmupMs });
        perLevel[`c${concurrency}`] = (await peer.call('loop', { concurrency, durationMs: plan.throughputMs })).perSecond;
      }
      ctx.log(
        `  ${kind} #${rep + 1}: ${Object.entries(perLevel)
          .map(([level, rate]) => `${level} ${rate.toFixed(0)}`)
          .join(', ')} /s`,
      );
      return perLevel;
    },
  );
  const table: RateTable<K> = {};
  for (const concurrency of concurrencies) {
    const level = `c${concurrency}`;
    table[level] = {};
    for (const kind of kinds) {
      const values = reps[kind]?.map((r) => r[level]);
      if (values?.length) table[level][kind] = spread(values);
    }
  }
  return table;
}
