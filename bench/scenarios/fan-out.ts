import type { BenchContext } from '../context';
import { Spread, spread } from '../stats';

export type FanOutFigures = { children: number } & Partial<Record<'ours' | 'dbos', { spawnMs: Spread; totalMs: Spread }>>;

/**
 * A parent starts `fanOutChildren` 3-step children one after another (ctx.startChild; DBOS:
 * startWorkflow inside the workflow), then awaits them all (ctx.all; DBOS: each getResult).
 * spawnMs: start until the last child was started; totalMs: start until the parent's result.
 */
export async function measureFanOut(ctx: BenchContext): Promise<FanOutFigures> {
  const { plan } = ctx;
  const figures: FanOutFigures = { children: plan.fanOutChildren };
  for (const kind of ['ours', 'dbos'] as const) {
    await ctx.attempt(`fanOut.${kind}`, () =>
      ctx.with([{ kind, concurrency: plan.workerConcurrency }], async (peer) => {
        await peer.call('fanOut', { children: plan.fanOutChildren });
        const reps: Array<{ spawnMs: number; totalMs: number }> = [];
        for (let i = 0; i < plan.reps; i++) reps.push(await peer.call('fanOut', { children: plan.fanOutChildren }));
        figures[kind] = { spawnMs: spread(reps.map((r) => r.spawnMs)), totalMs: spread(reps.map((r) => r.totalMs)) };
        ctx.log(`  ${kind}: total ${reps.map((r) => r.totalMs.toFixed(0)).join(' ')} ms`);
      }),
    );
  }
  return figures;
}
