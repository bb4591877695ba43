import type { BenchContext } from '../context';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';
import { System, SYSTEMS } from './throughput';

export type LatencyFigures = Partial<Record<System, Record<keyof Percentiles, Spread>>>;

/** One 3-step workflow at a time, start to result: p50, p95, p99 of each repetition. */
export async function measureLatency(ctx: BenchContext): Promise<LatencyFigures> {
  const { plan } = ctx;
  const reps = await ctx.rounds(
    'latency',
    SYSTEMS,
    plan.reps,
    (kind) => [{ kind, concurrency: plan.workerConcurrency }],
    async (kind, [peer], rep) => {
      await peer.call('loop', { concurrency: 1, count: Math.ceil(plan.latencySamples / 3) });
      const figures = percentiles((await peer.call('loop', { concurrency: 1, count: plan.latencySamples })).latenciesMs);
      ctx.log(`  ${kind} #${rep + 1}: p50 ${figures.p50.toFixed(2)} ms, p95 ${figures.p95.toFixed(2)} ms`);
      return figures;
    },
  );
  const figures: LatencyFigures = {};
  for (const kind of SYSTEMS) if (reps[kind]) figures[kind] = percentileSpreads(reps[kind]);
  return figures;
}
