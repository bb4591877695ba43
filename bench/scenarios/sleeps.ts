import type { BenchContext } from '../context';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';

const ENGINES = ['ours', 'dbos'] as const;
type Engine = (typeof ENGINES)[number];
export type SleepFigures = Record<
  'inline' | 'parked',
  { sleepMs: number; inlineWaitMs: number; runs: number; figures: Partial<Record<Engine, Record<keyof Percentiles, Spread>>> }
>;

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
    const reps = await ctx.rounds(
      `sleeps.${name}`,
      ENGINES,
      plan.reps,
      (kind) => [{ kind, concurrency: plan.workerConcurrency, inlineWaitMs }],
      async (kind, [peer], rep) => {
        await peer.call('sleepLateness', { ms: sleepMs, runs: Math.ceil(plan.sleepRuns / 3) });
        const result = percentiles(await peer.call('sleepLateness', { ms: sleepMs, runs: plan.sleepRuns }));
        ctx.log(`  ${kind} ${name} ${sleepMs} ms #${rep + 1}: late p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms`);
        return result;
      },
    );
    const figures: SleepFigures['inline']['figures'] = {};
    for (const kind of ENGINES) if (reps[kind]) figures[kind] = percentileSpreads(reps[kind]);
    out[name] = { sleepMs, inlineWaitMs, runs: plan.sleepRuns, figures };
  }
  return out;
}
