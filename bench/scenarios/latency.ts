import type { BenchContext } from '../context';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';
import { System, SYSTEMS } from './throughput';

export type LatencyFigures = Partial<Record<System, Record<keyof Percentiles, Spread>>>;

/** One 3-step workflow at a time, start to result: p50, p95, p99 of each repetition. */
export async function measureLatency(ctx: BenchContext): Promise<LatencyFigures> {
  const { plan } = ctx;
  const figures: LatencyFigures = {};
  for (const kind of SYSTEMS) {
    await ctx.attempt(`latency.${kind}`, () =>
      ctx.with([{ kind, concurrency: plan.workerConcurrency }], async (peer) => {
        await peer.call('loop', { concurrency: 1, count: Math.ceil(plan.latencySamples / 3) });
        const reps: Percentiles[] = [];
        for (let i = 0; i < plan.reps; i++) reps.push(percentiles((await peer.call('loop', { concurrency: 1, count: plan.latencySamples })).latenciesMs));
        figures[kind] = percentileSpreads(reps);
        ctx.log(`  ${kind}: p50 ${reps.map((r) => r.p50.toFixed(2)).join(' ')} ms`);
      }),
    );
  }
  return figures;
}
