import { performance } from 'node:perf_hooks';
import { Client, PoolClient } from 'pg';
import { runDurableMigrations } from 'nestjs-durable';
import type { BenchContext } from '../context';
import { delay } from '../measure';
import { createJournalPartitionsSql, dropEmptiedJournalDays, tablesFor } from '../scale/library-internals';
import { percentile, round } from '../stats';
import { sampleLockWaits } from '../lock-waits';

export interface RetentionFigures {
  /** Finished 3-step runs of one day, each with the journal a run leaves: three checkpoints, two history rows. */
  runs: number;
  journalRows: number;
  seedSeconds: number;
  /** The day's run rows deleted in one statement (what retention's batches do, summed). */
  runRowsDeleteMs: number;
  /** The day's journal partitions detached (CONCURRENTLY) and dropped: what retention does once no run of the day is left. */
  dropMs: number;
  /** 3-step workflows at `concurrency` on the same tables: a closed loop before the drop, and one the drop ran in the middle of. */
  concurrency: number;
  before: LoopFigures;
  during: LoopFigures;
  /** Sessions of the database seen waiting on a lock while the day was dropped (sampled every 20 ms), most at once; a blocked workflow would show here. */
  lockWaitsDuringDrop?: number;
}

interface LoopFigures {
  perSecond: number;
  p99Ms: number;
  maxMs: number;
}

const SCHEMA = 'bench_retention';
const LOOP_MS = 3_000;
const CONCURRENCY = 8;

/**
 * Retention by partition: a day of finished runs (`plan.retentionRuns`) seeded into its own partitions,
 * its run rows deleted, then its journal dropped while an instance runs 3-step workflows on the same
 * tables. The loop's throughput and tail latency before and during the drop show whether it blocks them.
 */
export async function measureRetention(ctx: BenchContext): Promise<RetentionFigures | undefined> {
  const runs = ctx.plan.retentionRuns;
  const db = new Client(ctx.url('ours'));
  await db.connect();
  // A second session, free while `db` drops the day, for the lock waits.
  const sampler = new Client(ctx.url('ours'));
  await sampler.connect();
  try {
    return await ctx.attempt('retention.ours', async () => {
      const t = tablesFor(SCHEMA);
      await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await runDurableMigrations({ connection: ctx.url('ours'), schema: SCHEMA });
      // A new schema's legacy partition (the days before partitioning) is empty: gone before the day is measured.
      await dropEmptiedJournalDays(db as unknown as PoolClient, t);
      await db.query(createJournalPartitionsSql(t, -3, -3));
      const t0 = performance.now();
      const batch = 50_000;
      for (let from = 1; from <= runs; from += batch) {
        await db.query(
          `WITH runs AS (
             INSERT INTO ${t.runs} (id, workflow, status, input, output, created_at, run_day, began_at, finished_at)
             SELECT 'old-' || g, 'bench-three-steps', 'completed', '1', '4', d.at, timezone('UTC', d.at)::date, d.at, d.at + interval '1 second'
             FROM generate_series($1::int, $2::int) g, (SELECT now() - interval '3 days' AS at) d
             RETURNING id, run_day
           ), steps AS (
             INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result)
             SELECT id, run_day, 'step:' || k, 'step', 'ok', k::text FROM runs, generate_series(1, 3) k
           )
           INSERT INTO ${t.history} (run_id, run_day, event, actor)
           SELECT id, run_day, e, 'bench-seed' FROM runs, unnest(ARRAY['started', 'completed']) e`,
          [from, Math.min(runs, from + batch - 1)],
        );
      }
      const seedSeconds = (performance.now() - t0) / 1000;
      for (const table of [t.runs, t.steps, t.history]) await db.query(`VACUUM ANALYZE ${table}`);
      ctx.log(`  seeded ${runs} finished runs of one day (${runs * 5} journal rows) in ${seedSeconds.toFixed(1)} s`);

      const t1 = performance.now();
      await db.query(`DELETE FROM ${t.runs} WHERE run_day = timezone('UTC', now())::date - 3`);
      const runRowsDeleteMs = performance.now() - t1;
      // Kept out of the measured loops, as they are not the drop's: the vacuum of the deleted rows that autovacuum (off
      // in the bench) would do, without which the engine's own analysis of the runs table, due as the loops add runs,
      // reads a million dead rows inside one of them; and the checkpoint of the seed's dirty pages.
      await db.query(`VACUUM ANALYZE ${t.runs}`);
      await db.query('CHECKPOINT');

      const spec = { kind: 'ours' as const, concurrency: 64, schema: SCHEMA };
      return ctx.with([spec], async (worker) => {
        await worker.call('loop', { concurrency: CONCURRENCY, durationMs: LOOP_MS }); // warm-up, as long as a measured loop
        const before = await worker.call('loop', { concurrency: CONCURRENCY, durationMs: LOOP_MS });
        const during = worker.call('loop', { concurrency: CONCURRENCY, durationMs: LOOP_MS });
        await delay(LOOP_MS / 3);
        const sampled = sampleLockWaits(sampler, 20);
        const t2 = performance.now();
        const dropped = (await dropEmptiedJournalDays(db as unknown as PoolClient, t)) ?? [];
        const dropMs = performance.now() - t2;
        const lockWaitsDuringDrop = Math.max(0, ...(await sampled.stop()));
        const loop = await during;
        ctx.log(
          `  dropped the journal of ${dropped.join(', ')} in ${dropMs.toFixed(0)} ms (the run rows' delete: ${(runRowsDeleteMs / 1000).toFixed(1)} s); ` +
            `${CONCURRENCY} callers did ${before.perSecond.toFixed(0)}/s before and ${loop.perSecond.toFixed(0)}/s with the drop in the middle`,
        );
        const figures = (r: { perSecond: number; latenciesMs: number[] }): LoopFigures => ({
          perSecond: round(r.perSecond, 1),
          p99Ms: round(percentile(r.latenciesMs, 99), 2),
          maxMs: round(Math.max(...r.latenciesMs), 2),
        });
        return {
          runs,
          journalRows: runs * 5,
          seedSeconds: round(seedSeconds, 1),
          runRowsDeleteMs: round(runRowsDeleteMs, 0),
          dropMs: round(dropMs, 1),
          concurrency: CONCURRENCY,
          before: figures(before),
          during: figures(loop),
          lockWaitsDuringDrop,
        };
      });
    });
  } finally {
    await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
    await db.end();
    await sampler.end();
  }
}
