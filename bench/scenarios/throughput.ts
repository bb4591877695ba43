import { dirname, join } from 'node:path';
import type { BenchContext } from '../context';
import type { PeerKind, PeerSpec } from '../peers/peer';
import { Spread, spread } from '../stats';

export const SYSTEMS = ['ours', 'dbos', 'floor'] as const;
export type System = (typeof SYSTEMS)[number];

/** Per concurrency level ("c8"), per peer: completed units per second. */
export type RateTable<K extends string> = Record<string, Partial<Record<K, Spread>>>;

/** DBOS measured at its default pool and at ours, in the same run; the throughput table holds its better figure per level. */
export interface DbosPools {
  sizes: { default: number; ours: number };
  rates: RateTable<'default' | 'ours'>;
}

/**
 * 3-step workflows started and awaited in one process by `c` callers in a closed loop, for
 * c = 1, 8, 64: workflows per second (steps per second is three times that). Each repetition is a
 * fresh process per system that warms up at each level before its measured loop. DBOS runs twice,
 * with its default pool and with ours (worker concurrency + 5), and is compared at its better one.
 */
export async function measureThroughput(ctx: BenchContext): Promise<{ rates: RateTable<System>; dbosPools?: DbosPools }> {
  const { plan } = ctx;
  const sizes = { default: dbosDefaultPool(), ours: plan.workerConcurrency + 5 };
  const variants = ['ours', 'dbos', 'dbos:pool', 'floor'] as const;
  const measured = await rates(ctx, 'throughput', variants, plan.concurrencies, (variant) =>
    variant === 'dbos:pool' ? { kind: 'dbos', pool: sizes.ours } : { kind: variant },
  );
  const table: RateTable<System> = {};
  const pools: DbosPools['rates'] = {};
  for (const [level, row] of Object.entries(measured)) {
    const { ours, floor, dbos, 'dbos:pool': dbosPool } = row;
    pools[level] = { default: dbos, ours: dbosPool };
    const better = [dbos, dbosPool].filter((x): x is Spread => !!x).sort((a, b) => b.median - a.median)[0];
    table[level] = { ours, floor, dbos: better };
  }
  return { rates: table, dbosPools: { sizes, rates: pools } };
}

/** The server's commit ceiling on the same loop: single-row jsonb inserts from 1 and 8 clients. */
export function measureCeiling(ctx: BenchContext): Promise<RateTable<'ceiling'>> {
  return rates(ctx, 'ceiling', ['ceiling'] as const, [1, 8], (kind) => ({ kind }));
}

/** DBOS' default pool size, read from the installed package (its `exports` hide the module: loaded by path). */
function dbosDefaultPool(): number {
  const dist = dirname(require.resolve('@dbos-inc/dbos-sdk'));
  return (require(join(dist, 'system_database')) as { DEFAULT_POOL_SIZE: number }).DEFAULT_POOL_SIZE;
}

async function rates<V extends string>(
  ctx: BenchContext,
  name: string,
  variants: readonly V[],
  concurrencies: number[],
  specOf: (variant: V) => { kind: PeerKind } & Partial<PeerSpec>,
): Promise<RateTable<V>> {
  const { plan } = ctx;
  const reps = await ctx.rounds(
    name,
    variants,
    plan.throughputReps,
    (variant) => [{ concurrency: plan.workerConcurrency, ...specOf(variant) }],
    async (variant, [peer], rep) => {
      const perLevel: Record<string, number> = {};
      for (const concurrency of concurrencies) {
        await peer.call('loop', { concurrency, durationMs: plan.warmupMs });
        perLevel[`c${concurrency}`] = (await peer.call('loop', { concurrency, durationMs: plan.throughputMs })).perSecond;
      }
      ctx.log(
        `  ${variant} #${rep + 1}: ${Object.entries(perLevel)
          .map(([level, rate]) => `${level} ${rate.toFixed(0)}`)
          .join(', ')} /s`,
      );
      return perLevel;
    },
  );
  const table: RateTable<V> = {};
  for (const concurrency of concurrencies) {
    const level = `c${concurrency}`;
    table[level] = {};
    for (const variant of variants) {
      const values = reps[variant]?.map((r) => r[level]);
      if (values?.length) table[level][variant] = spread(values);
    }
  }
  return table;
}
