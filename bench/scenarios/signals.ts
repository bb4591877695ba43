import type { BenchContext } from '../context';
import type { PeerProcess } from '../process/peer-process';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';

const ENGINES = ['ours', 'dbos'] as const;
type Engine = (typeof ENGINES)[number];
export type RoundTripFigures = Record<'inProcess' | 'crossInstance', Partial<Record<Engine, Record<keyof Percentiles, Spread>>>> & {
  /** Ours in-process, the run waiting in a select of two arms (the signal and a timer): against `inProcess`. */
  select?: Partial<Record<'ours', Record<keyof Percentiles, Spread>>>;
};

/**
 * A run waits for the signal `go`; the time from just before the delivery call to the moment the
 * run's starter holds its result. In-process: one instance waits, delivers and awaits. Cross-instance:
 * instance A executes and awaits the run, instance B (worker disabled; for DBOS a DBOSClient)
 * delivers, so the wake travels by NOTIFY. Select: ours in-process, the run waiting in ctx.select with
 * the signal and a timer as arms. Both instants are taken inside the peer processes.
 */
export async function measureSignals(ctx: BenchContext): Promise<RoundTripFigures> {
  const { plan } = ctx;
  const figures: RoundTripFigures = { inProcess: {}, crossInstance: {} };
  const modes = {
    inProcess: (kind: Engine) => [{ kind, concurrency: plan.workerConcurrency }],
    crossInstance: (kind: Engine) => [
      { kind, concurrency: plan.workerConcurrency },
      { kind, concurrency: 4, worker: false },
    ],
  };
  for (const [mode, specs] of Object.entries(modes) as Array<
    ['inProcess' | 'crossInstance', (kind: Engine) => Array<{ kind: Engine; concurrency: number }>]
  >) {
    const reps = await ctx.rounds(`signals.${mode}`, ENGINES, plan.reps, specs, async (kind, [waiter, deliverer = waiter], rep) => {
      await roundTrips(waiter, deliverer, Math.ceil(plan.signalSamples / 3));
      const result = percentiles(await roundTrips(waiter, deliverer, plan.signalSamples));
      ctx.log(`  ${kind} ${mode} #${rep + 1}: p50 ${result.p50.toFixed(2)} ms, p95 ${result.p95.toFixed(2)} ms`);
      return result;
    });
    for (const kind of ENGINES) if (reps[kind]) figures[mode][kind] = percentileSpreads(reps[kind]);
  }
  const select = await ctx.rounds('signals.select', ['ours'] as const, plan.reps, modes.inProcess, async (kind, [waiter], rep) => {
    await roundTrips(waiter, waiter, Math.ceil(plan.signalSamples / 3), true);
    const result = percentiles(await roundTrips(waiter, waiter, plan.signalSamples, true));
    ctx.log(`  ${kind} select #${rep + 1}: p50 ${result.p50.toFixed(2)} ms, p95 ${result.p95.toFixed(2)} ms`);
    return result;
  });
  if (select.ours) figures.select = { ours: percentileSpreads(select.ours) };
  return figures;
}

async function roundTrips(waiter: PeerProcess, deliverer: PeerProcess, samples: number, select = false): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const runId = await waiter.call('startWaiting', { select });
    await waiter.call('arm', { runId });
    const delivered = await deliverer.call('deliver', { runId });
    out.push((await waiter.call('collect', { runId })) - delivered);
  }
  return out;
}
