import type { BenchContext } from '../context';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';

type Engine = 'ours' | 'dbos';
export type SleepFigures = Record<'inline' | 'parked', { sleepMs: number; inlineWaitMs: number; runs: number; figures: Partial<Record<Engine, Record<keyof Percentiles, Spread>>> }>;

/**
 * How late durable sleeps wake: actual wake minus the instant first asked for, over `sleepRuns`
 * runs sleeping at once. Inline: shorter than inlineWaitMs, so ours waits in-process. Parked:
 * longer than inlineWaitMs, so ours parks the run and a worker claims it again at the wake time.
 * DBOS has one mechanism; it sleeps the same durations.
 */
export async function measureSleeps(ctx: BenchContext): Promise<SleepFigures> {
  const { plan } = ctx;
  const cases = {
    inline: { sleepMs: plan.inlineSleepMs, inlineWaitMs: 2_000 },
    parked: { sleepMs: plan.parkedSleepMs, inlineWaitMs: plan.parkedInlineWaitMs },
  };
  const out = {} as SleepFigures;
  for (const [name, { sleepMs, inlineWaitMs }] of Object.entries(cases) as Array<[keyof SleepFigures, (typeof cases)['inline']]>) {
    const figures: SleepFigures['inline']['figures'] = {};
    for (const kind of ['ours', 'dbos'] as const) {
      await ctx.attempt(`sleeps.${name}.${kind}`, () =>
        ctx.with([{ kind, concurrency: plan.workerConcurrency, inlineWaitMs }], async (peer) => {
          await peer.call('sleepLateness', { ms: sleepMs, runs: Math.ceil(plan.sleepRuns / 3) });
          const reps: Percentiles[] = [];
          for (let i = 0; i < plan.reps; i++) reps.push(percentiles(await peer.call('sleepLateness', { ms: sleepMs, runs: plan.sleepRuns })));
          figures[kind] = percentileSpreads(reps);
          ctx.log(`  ${kind} ${name} ${sleepMs} ms: p95 late ${reps.map((r) => r.p95.toFixed(1)).join(' ')} ms`);
        }),
      );
    }
    out[name] = { sleepMs, inlineWaitMs, runs: plan.sleepRuns, figures };
  }
  return out;
}
