import { performance } from 'node:perf_hooks';
import type { Client } from 'pg';
import type { BenchContext } from '../context';
import { delay, until } from '../measure';
import type { OpResult } from '../process/ops';
import type { PeerProcess } from '../process/peer-process';
import { tablesFor } from '../scale/library-internals';
import { round, Spread, spread } from '../stats';

const MB = 1024 * 1024;
const SCHEMA = 'bench_memory';
const IDLE_SCHEMA = 'bench_idle';

type Memory = { rss: Spread; heapUsed: Spread };
export interface RunMemoryFigures {
  runs: number;
  /** From the first start to the last run parked, and from the first delivery to the last run completed. */
  parkSeconds: number;
  wakeSeconds: number;
  /** The loaded worker and the idle one, sampled at the same moments: with the runs parked, then with them completed. */
  parked: { loaded: Memory; idle: Memory; addedMb: { rss: number; heapUsed: number } };
  woken: { loaded: Memory; idle: Memory; addedMb: { rss: number; heapUsed: number } };
}

/**
 * A worker's memory for runs it handled itself: it starts `parkedRuns` runs, executes each (a step,
 * then a wait for a signal with a day's timeout) and parks them; later it delivers the signal to
 * all of them by key and executes them to the end. A second worker over an empty schema gets the
 * same warm-up and is sampled at the same moments (after a full collection), so what the loaded one
 * holds beyond it is what the runs left behind: a timer, listener or journal kept per run would show.
 */
export async function measureRunMemory(ctx: BenchContext, db: Client): Promise<RunMemoryFigures> {
  const { plan } = ctx;
  const runs = plan.parkedRuns;
  const spec = (schema: string) => ({ kind: 'ours' as const, concurrency: plan.workerConcurrency, schema, inlineWaitMs: 0 });
  const t = tablesFor(SCHEMA);
  const count = async (status: string) =>
    (
      (await db.query(`SELECT count(*)::int AS n FROM ${t.runs} WHERE workflow = 'bench-park' AND status = $1`, [status])).rows[0] as {
        n: number;
      }
    ).n;
  try {
    return await ctx.with([spec(SCHEMA), spec(IDLE_SCHEMA)], async (loaded, idle) => {
      for (const worker of [loaded, idle]) await worker.call('loop', { concurrency: 8, count: 500 });
      const t0 = performance.now();
      await loaded.call('park', { count: runs, group: 'memory' });
      await until(async () => (await count('waiting')) === runs, `${runs} runs to park`, 300_000, 200);
      const parkSeconds = (performance.now() - t0) / 1000;
      const parked = await compare(ctx, loaded, idle);

      const t1 = performance.now();
      await loaded.call('wake', { count: runs, group: 'memory' });
      await until(async () => (await count('completed')) === runs, `${runs} woken runs to complete`, 300_000, 200);
      const wakeSeconds = (performance.now() - t1) / 1000;
      const woken = await compare(ctx, loaded, idle);
      ctx.log(
        `  ${runs} runs parked in ${parkSeconds.toFixed(1)} s: +${parked.addedMb.rss} MB RSS, +${parked.addedMb.heapUsed} MB heap; ` +
          `woken and completed in ${wakeSeconds.toFixed(1)} s: +${woken.addedMb.rss} MB RSS, +${woken.addedMb.heapUsed} MB heap`,
      );
      return { runs, parkSeconds: round(parkSeconds, 1), wakeSeconds: round(wakeSeconds, 1), parked, woken };
    });
  } finally {
    for (const schema of [SCHEMA, IDLE_SCHEMA]) await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

/** Both workers after a full collection, sampled side by side; what the loaded one holds beyond the idle one. */
async function compare(ctx: BenchContext, loaded: PeerProcess, idle: PeerProcess): Promise<RunMemoryFigures['parked']> {
  await delay(2_000); // a sweep or two over the parked runs
  // The first full collection returns the last phase's garbage to the system: settle both before sampling.
  for (const worker of [loaded, idle]) await worker.call('memory');
  const samples: Record<'loaded' | 'idle', Array<OpResult<'memory'>>> = { loaded: [], idle: [] };
  for (let i = 0; i < Math.max(5, ctx.plan.reps); i++) {
    await delay(500);
    samples.loaded.push(await loaded.call('memory'));
    samples.idle.push(await idle.call('memory'));
  }
  const mb = (list: Array<OpResult<'memory'>>): Memory => ({
    rss: spread(list.map((r) => r.rss / MB)),
    heapUsed: spread(list.map((r) => r.heapUsed / MB)),
  });
  const l = mb(samples.loaded);
  const i = mb(samples.idle);
  return {
    loaded: l,
    idle: i,
    addedMb: { rss: round(l.rss.median - i.rss.median, 2), heapUsed: round(l.heapUsed.median - i.heapUsed.median, 2) },
  };
}
