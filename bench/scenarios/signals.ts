import type { BenchContext } from '../context';
import type { PeerProcess } from '../process/peer-process';
import { Percentiles, percentileSpreads, percentiles, Spread } from '../stats';

type Engine = 'ours' | 'dbos';
export type RoundTripFigures = Record<'inProcess' | 'crossInstance', Partial<Record<Engine, Record<keyof Percentiles, Spread>>>>;

/**
 * A run waits for the signal `go`; the time from just before the delivery call to the moment the
 * run's starter holds its result. In-process: one instance waits, delivers and awaits. Cross-instance:
 * instance A executes and awaits the run, instance B (worker disabled; for DBOS a DBOSClient)
 * delivers, so the wake travels by NOTIFY. Both instants are taken inside the peer processes.
 */
export async function measureSignals(ctx: BenchContext): Promise<RoundTripFigures> {
  const { plan } = ctx;
  const figures: RoundTripFigures = { inProcess: {}, crossInstance: {} };
  for (const kind of ['ours', 'dbos'] as const) {
    const waiter = { kind, concurrency: plan.workerConcurrency };
    await ctx.attempt(`signals.inProcess.${kind}`, () =>
      ctx.with([waiter], async (a) => (figures.inProcess[kind] = await repeated(ctx, `${kind} in-process`, a, a))),
    );
    await ctx.attempt(`signals.crossInstance.${kind}`, () =>
      ctx.with([waiter, { kind, concurrency: 4, worker: false }], async (a, b) => (figures.crossInstance[kind] = await repeated(ctx, `${kind} cross-instance`, a, b))),
    );
  }
  return figures;
}

async function repeated(ctx: BenchContext, label: string, waiter: PeerProcess, deliverer: PeerProcess) {
  await roundTrips(waiter, deliverer, Math.ceil(ctx.plan.signalSamples / 3));
  const reps: Percentiles[] = [];
  for (let i = 0; i < ctx.plan.reps; i++) reps.push(percentiles(await roundTrips(waiter, deliverer, ctx.plan.signalSamples)));
  ctx.log(`  ${label}: p50 ${reps.map((r) => r.p50.toFixed(2)).join(' ')} ms`);
  return percentileSpreads(reps);
}

async function roundTrips(waiter: PeerProcess, deliverer: PeerProcess, samples: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const runId = await waiter.call('startWaiting');
    await waiter.call('arm', { runId });
    const delivered = await deliverer.call('deliver', { runId });
    out.push((await waiter.call('collect', { runId })) - delivered);
  }
  return out;
}
