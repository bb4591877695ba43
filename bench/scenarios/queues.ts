import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { runDurableMigrations } from 'nestjs-durable';
import type { BenchContext } from '../context';
import { ADMISSION_PLANS_SQL, admitQueuedSql, tablesFor } from '../scale/library-internals';
import { Spread, spread } from '../stats';

export interface QueueFigures {
  /**
   * 3-step workflows per second at concurrency `concurrency`, closed loop, through a queue whose
   * concurrency is the worker's (ours, DBOS), and ours without a queue in the same process.
   */
  throughput?: { concurrency: number; queued: { ours?: Spread; dbos?: Spread }; unqueued: Spread; ratio: number };
  /** The admission statement (one queue, 64 free slots) over `pending` pending runs spread over `partitions` keys. */
  admission?: {
    pending: number;
    partitions: number;
    /** Round trip of the statement, with a partition limit of 2 and without one. */
    partitionedMs: Spread;
    unpartitionedMs: Spread;
  };
}

const SCHEMA = 'bench_queues';

/**
 * Flow control: the throughput of queued 3-step workflows against unqueued ones (ours) and against
 * DBOS' queues at the same limit; then the admission statement's cost over a deep backlog spread over
 * many partitions, seeded by SQL in a schema of its own.
 */
export async function measureQueues(ctx: BenchContext): Promise<QueueFigures> {
  const { plan } = ctx;
  const concurrency = 64;
  const figures: QueueFigures = {};
  const reps = await ctx.rounds(
    'queues.throughput',
    ['ours', 'dbos'] as const,
    plan.throughputReps,
    (kind) => [{ kind, concurrency: plan.workerConcurrency }],
    async (kind, [peer], rep) => {
      // Both loops warm the process (its pool's connections, their prepared statements) before either is
      // measured, and the order alternates by rep: the loop measured first in a fresh process is slower.
      const measure = async (loop: 'queuedLoop' | 'loop') =>
        (await peer.call(loop, { concurrency, durationMs: plan.throughputMs })).perSecond;
      await peer.call('queuedLoop', { concurrency, durationMs: plan.warmupMs });
      if (kind === 'ours') await peer.call('loop', { concurrency, durationMs: plan.warmupMs });
      let queued: number;
      let unqueued: number | undefined;
      if (kind === 'ours' && rep % 2 === 1) {
        unqueued = await measure('loop');
        queued = await measure('queuedLoop');
      } else {
        queued = await measure('queuedLoop');
        if (kind === 'ours') unqueued = await measure('loop');
      }
      ctx.log(
        `  ${kind} #${rep + 1}: queued c${concurrency} ${queued.toFixed(0)} /s${unqueued ? `, unqueued ${unqueued.toFixed(0)} /s` : ''}`,
      );
      return { queued, unqueued };
    },
  );
  if (reps.ours?.length) {
    const queuedOurs = spread(reps.ours.map((r) => r.queued));
    const unqueued = spread(reps.ours.map((r) => r.unqueued!));
    figures.throughput = {
      concurrency,
      queued: { ours: queuedOurs, ...(reps.dbos?.length ? { dbos: spread(reps.dbos.map((r) => r.queued)) } : {}) },
      unqueued,
      ratio: queuedOurs.median / unqueued.median,
    };
  }

  figures.admission = await ctx.attempt('queues.admission', async () => {
    const pending = plan.quick ? 100_000 : 1_000_000;
    const partitions = plan.quick ? 1_000 : 10_000;
    await runDurableMigrations({ connection: ctx.url('ours'), schema: SCHEMA });
    const db = new Client(ctx.url('ours'));
    await db.connect();
    try {
      await db.query('SET jit = off'); // as on the library's own connections
      const t = tablesFor(SCHEMA);
      const t0 = performance.now();
      for (let from = 1; from <= pending; from += 250_000) {
        await db.query(
          `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue, partition_key)
           SELECT 'queued-' || g, 'bench-three-steps', 'pending', '1', now() - g * interval '1 millisecond', 'bench', 'tenant-' || (g % $3)
           FROM generate_series($1::int, $2::int) g`,
          [from, Math.min(pending, from + 249_999), partitions],
        );
      }
      // The queue's slots, as an instance's boot makes them (mendSlotsSql).
      await db.query(`INSERT INTO ${t.queueSlots} (queue, slot) SELECT 'bench', n FROM generate_series(1, 64) n`);
      await db.query(`VACUUM ANALYZE ${t.runs}`);
      ctx.log(`  seeded ${pending} pending runs over ${partitions} partitions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      // The statement the worker sends, prepared as its pool does and run with its generic plan, as in the
      // worker's admission transaction; each time in a transaction rolled back (nothing is admitted for good).
      await db.query(`PREPARE admit(text, int, int, int, bigint, int, text[], text, int, int) AS ${admitQueuedSql(t)}`);
      const time = async (partitionConcurrency: number | null): Promise<number[]> => {
        const wall: number[] = [];
        for (let i = 0; i < 3 + Math.max(10, plan.reps * 5); i++) {
          await db.query(`BEGIN; ${ADMISSION_PLANS_SQL}`);
          const s = performance.now();
          const { rows } = await db.query(
            `EXECUTE admit('bench', 64, ${partitionConcurrency ?? 'NULL'}, NULL, NULL, 64, ARRAY['bench-three-steps'], 'bench', 30000, 1000)`,
          );
          const ms = performance.now() - s;
          await db.query('ROLLBACK');
          if (rows.length !== 64) throw new Error(`admission took ${rows.length} runs where 64 slots were free`);
          if (i >= 3) wall.push(ms);
        }
        return wall;
      };
      const figure = { pending, partitions, partitionedMs: spread(await time(2)), unpartitionedMs: spread(await time(null)) };
      ctx.log(
        `  admission of 64 over ${pending} pending: ${figure.partitionedMs.median.toFixed(2)} ms with a partition limit, ${figure.unpartitionedMs.median.toFixed(2)} ms without`,
      );
      return figure;
    } finally {
      await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
      await db.end();
    }
  });
  return figures;
}
