import type { BenchContext } from '../context';
import type { PeerKind } from '../peers/peer';
import { Spread, spread } from '../stats';

export const SYSTEMS = ['ours', 'dbos', 'floor'] as const;
export type System = (typeof SYSTEMS)[number];

/** Per concurrency level ("c8"), per peer: completed units per second. */
export type RateTable<K extends string> = Record<string, Partial<Record<K, Spread>>>;

/**
 * 3-step workflows started and awaited in one process by `c` callers in a closed loop, for
 * c = 1, 8, 64: workflows per second (steps per second is three times that). One process per
 * system; each concurrency level gets a warm-up repetition first.
 */
export async function measureThroughput(ctx: BenchContext): Promise<RateTable<System>> {
  const table: RateTable<System> = {};
  for (const kind of SYSTEMS) await rates(ctx, kind, ctx.plan.concurrencies, table);
  return table;
}

/** The server's commit ceiling on the same loop: single-row jsonb inserts from 1 and 8 clients. */
export async function measureCeiling(ctx: BenchContext): Promise<RateTable<'ceiling'>> {
  const table: RateTable<'ceiling'> = {};
  await rates(ctx, 'ceiling', [1, 8], table);
  return table;
}

async function rates<K extends PeerKind>(ctx: BenchContext, kind: K, concurrencies: number[], table: RateTable<K>): Promise<void> {
  const { plan } = ctx;
  await ctx.attempt(`throughput.${kind}`, () =>
    ctx.with([{ kind, concurrency: plan.workerConcurrency }], async (peer) => {
      for (const concurrency of concurrencies) {
        await peer.call('loop', { concurrency, durationMs: plan.warmupMs });
        const reps: number[] = [];
        for (let i = 0; i < plan.throughputReps; i++) reps.push((await peer.call('loop', { concurrency, durationMs: plan.throughputMs })).perSecond);
        (table[`c${concurrency}`] ??= {})[kind] = spread(reps);
        ctx.log(`  ${kind} c${concurrency}: ${reps.map((r) => r.toFixed(0)).join(' ')} /s`);
      }
    }),
  );
}
