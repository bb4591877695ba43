import type { BenchContext } from '../context';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';
import { System, SYSTEMS } from './throughput';

export type LatencyFigures = Partial<Record<System, Record<keyof Percentiles, Spread>>>;

/**
 * One 3-step workflow at a time, start to result: p50, p95, p99 of each repetition, twice in one process.
 * `fresh`: its first workflows after a warm-up of a third as many (the target's figure). `warm`: as
 * many again once the process has run workflows for `plan.latencyWarmMs` more, as a service has. The
 * two differ by the process's own warm-up (V8 optimizing the hot code on the machine's two cores,
 * beside Postgres), which takes each system a different number of workflows.
 */
export async function measureLatency(ctx: BenchContext): Promise<{ fresh: LatencyFigures; warm: LatencyFigures }> {
  const { plan } = ctx;
  const reps = await ctx.rounds(
    'latency',
    SYSTEMS,
    plan.reps,
    (kind) => [{ kind, concurrency: plan.workerConcurrency }],
    async (kind, [peer], rep) => {
      const sample = async () => percentiles((await peer.call('loop', { concurrency: 1, count: plan.latencySamples })).latenciesMs);
      await peer.call('loop', { concurrency: 1, count: Math.ceil(plan.latencySamples / 3) });
      const fresh = await sample();
      await peer.call('loop', { concurrency: 1, durationMs: plan.latencyWarmMs });
      const warm = await sample();
      ctx.log(
        `  ${kind} #${rep + 1}: p50 ${fresh.p50.toFixed(2)} ms fresh, ${warm.p50.toFixed(2)} ms warm; p95 ${fresh.p95.toFixed(2)} ms fresh`,
      );
      return { fresh, warm };
    },
  );
  const figures = { fresh: {} as LatencyFigures, warm: {} as LatencyFigures };
  for (const kind of SYSTEMS) {
    if (!reps[kind]) continue;
    figures.fresh[kind] = percentileSpreads(reps[kind].map((r) => r.fresh));
    figures.warm[kind] = percentileSpreads(reps[kind].map((r) => r.warm));
  }
  return figures;
}
