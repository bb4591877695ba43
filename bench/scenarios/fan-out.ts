import type { BenchContext } from '../context';
import { Spread, spread } from '../stats';

const ENGINES = ['ours', 'dbos'] as const;
export type FanOutFigures = { children: number } & Partial<Record<(typeof ENGINES)[number], { spawnMs: Spread; totalMs: Spread }>>;

/**
 * A parent starts `fanOutChildren` 3-step children one after another (ctx.startChild; DBOS:
 * startWorkflow inside the workflow), then awaits them all (ctx.all; DBOS: each getResult).
 * spawnMs: start until the last child was started; totalMs: start until the parent's result.
 */
export async function measureFanOut(ctx: BenchContext): Promise<FanOutFigures> {
  const { plan } = ctx;
  const reps = await ctx.rounds(
    'fanOut',
    ENGINES,
    plan.reps,
    (kind) => [{ kind, concurrency: plan.workerConcurrency }],
    async (kind, [peer], rep) => {
      await peer.call('fanOut', { children: plan.fanOutChildren });
      const result = await peer.call('fanOut', { children: plan.fanOutChildren });
      ctx.log(
        `  ${kind} #${rep + 1}: children started in ${result.spawnMs.toFixed(0)} ms, parent result in ${result.totalMs.toFixed(0)} ms`,
      );
      return result;
    },
  );
  const figures: FanOutFigures = { children: plan.fanOutChildren };
  for (const kind of ENGINES) {
    const list = reps[kind];
    if (list) figures[kind] = { spawnMs: spread(list.map((r) => r.spawnMs)), totalMs: spread(list.map((r) => r.totalMs)) };
  }
  return figures;
}
