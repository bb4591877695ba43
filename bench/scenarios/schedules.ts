import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { runDurableMigrations } from 'nestjs-durable';
import type { BenchContext } from '../context';
import { delay, until } from '../measure';
import { SchedulePass, ScheduleRepository, SCHEDULES_PER_TRANSACTION, tablesFor, wakeChannel } from '../scale/library-internals';
import { standInDatabase } from '../scale/stand-in-database';
import { percentile, round, Spread, spread } from '../stats';

/** The workflow of the seeded schedules (bench/peers/ours.ts), the only one the pass timed alone registers. */
const WORKFLOW = 'bench-nap';

export interface ScheduleFigures {
  /** The schedule pass (SchedulePass.run, the library's own, over this connection) when no schedule is due. */
  passNoneDue?: {
    schedules: number;
    batch: number;
    /** The whole pass as a sweep pays it (one read of the earliest next_fire_at, no transaction). With `schedules` rows, and with none. */
    wallMs: Spread;
    emptyWallMs: Spread;
    /** That read alone, EXPLAIN ANALYZE (server side). */
    executionMs: Spread;
    plan: string[];
  };
  /** `schedules` per-minute schedules whose next slot is the same minute boundary, fired by one worker's sweeper. */
  slotLateness?: {
    schedules: number;
    sweeperMs: number;
    batch: number;
    workerConcurrency: number;
    /** Runs the slot started (should be `schedules`). */
    runs: number;
    /** From the slot until the run was visible: its NOTIFY, sent at the commit of the pass transaction that inserted it, arrived here. */
    latenessMs: { min: number; p50: number; p95: number; max: number };
    /** From the slot to the start of the pass transaction that inserted the run (its row's created_at), p50 and p95. */
    insertStartMs: { p50: number; p95: number };
    /** From the slot until every run was visible (polled every 50 ms). */
    allVisibleMs: number;
    /** Pass transactions that inserted the runs (distinct created_at). */
    transactions: number;
  };
}

const SCHEMA = 'bench_schedules';
const CRON = '* * * * *';

/**
 * Durable schedules at scale, in a schema of its own in ours' database: `plan.schedules` per-minute
 * schedules seeded by SQL, all next due at one minute boundary. Before it, the library's schedule pass
 * is timed from here with none due (and with an empty table); then a worker process sweeps (its
 * WakeSweeper, the default interval) and fires the boundary's slot of every schedule, and each run's
 * insert is set against the slot.
 */
export async function measureSchedules(ctx: BenchContext): Promise<ScheduleFigures> {
  const { plan } = ctx;
  await runDurableMigrations({ connection: ctx.url('ours'), schema: SCHEMA });
  const db = new Client(ctx.url('ours'));
  await db.connect();
  // The library's repository and pass run over a pool like a worker's (a crowd fires in parallel transactions).
  const pool = new Pool({ connectionString: ctx.url('ours'), max: 4, options: '-c jit=off' });
  try {
    await db.query('SET jit = off'); // as on the library's own connections (DurableDatabase)
    const t = tablesFor(SCHEMA);
    await db.query(`TRUNCATE ${t.schedules}, ${t.scheduleSkips}, ${t.runs}, ${t.steps}, ${t.history}`);
    const batch = SCHEDULES_PER_TRANSACTION; // the due schedules one pass transaction fires
    // The statements a worker's sweep sends.
    const repository = new ScheduleRepository(standInDatabase(SCHEMA, pool) as never);
    // No test clock, no metrics, no executions, the schedules' workflow as the only one registered: what the pass reads of each.
    const pass = new SchedulePass(
      repository,
      { shiftMs: 0 } as never,
      { names: () => [WORKFLOW], resolve: () => ({ queue: null }) } as never,
      { started: () => undefined } as never,
      { revoke: () => undefined } as never,
    );
    const reps = plan.quick ? 20 : 100;
    const timePass = async (): Promise<number[]> => {
      const wall: number[] = [];
      for (let i = 0; i < 5 + reps; i++) {
        const t0 = performance.now();
        const { started } = await pass.run();
        const elapsed = performance.now() - t0;
        if (started !== 0) throw new Error(`the pass started ${started} runs where none was due`);
        if (i >= 5) wall.push(elapsed); // warm-up
      }
      return wall;
    };

    const figures: ScheduleFigures = {};
    const empty = await ctx.attempt('schedules.passNoneDue', timePass);

    // The next minute boundary that leaves time to seed, time the pass and boot the worker before it.
    const [{ boundary }] = (
      await db.query(`SELECT date_trunc('minute', clock_timestamp() + interval '12 seconds') + interval '1 minute' AS boundary`)
    ).rows as Array<{ boundary: Date }>;
    const t0 = performance.now();
    // Row for row as ScheduleService.create leaves a schedule after its first pass: last slot the
    // previous boundary, next_fire_at the coming one.
    await db.query(
      `INSERT INTO ${t.schedules} (name, workflow, cron, timezone, overlap, catchup_window_ms, catchup, input, jitter_ms, source, paused, last_slot, next_fire_at)
       SELECT 'bench-every-minute-' || g, $4, $1, 'UTC', 'skip', 60000, 'latest', '{"ms":1,"report":false}', 0, 'api', false,
              $2::timestamptz - interval '1 minute', $2::timestamptz
       FROM generate_series(1, $3::int) g`,
      [CRON, boundary, plan.schedules, WORKFLOW],
    );
    await db.query(`VACUUM ANALYZE ${t.schedules}`);
    ctx.log(
      `  seeded ${plan.schedules} schedules (${CRON}) in ${((performance.now() - t0) / 1000).toFixed(1)} s, due at ${boundary.toISOString()}`,
    );

    figures.passNoneDue = await ctx.attempt('schedules.passNoneDue', async () => {
      const wall = await timePass();
      const nextDue = (repository as unknown as { sql: { nextDue: string } }).sql.nextDue;
      const execution: number[] = [];
      let planText: string[] = [];
      for (let i = 0; i < 2 + Math.max(5, plan.reps); i++) {
        const explained = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${nextDue}`, [0, 10_000, [WORKFLOW]])).rows[0][
          'QUERY PLAN'
        ][0];
        if (i === 0)
          planText = (await db.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${nextDue}`, [0, 10_000, [WORKFLOW]])).rows.map(
            (r) => r['QUERY PLAN'] as string,
          );
        if (i >= 2) execution.push(explained['Execution Time']);
      }
      const figure = {
        schedules: plan.schedules,
        batch,
        wallMs: spread(wall),
        emptyWallMs: spread(empty ?? []),
        executionMs: spread(execution),
        plan: planText,
      };
      ctx.log(
        `  schedule pass, none due: ${figure.wallMs.median.toFixed(3)} ms with ${plan.schedules} schedules, ${figure.emptyWallMs.median.toFixed(3)} ms with none (its read ${figure.executionMs.median.toFixed(3)} ms, EXPLAIN ANALYZE)`,
      );
      return figure;
    });
    const [{ late }] = (await db.query(`SELECT clock_timestamp() >= $1::timestamptz AS late`, [boundary])).rows as Array<{ late: boolean }>;
    if (late) ctx.log('  note: the pass timings ran past the boundary; they may include due schedules');

    figures.slotLateness = await ctx.attempt('schedules.slotLateness', async () => {
      const sweeperMs = 1_000;
      const spec = { kind: 'ours' as const, concurrency: plan.workerConcurrency, schema: SCHEMA, sweeperMs };
      return ctx.with([spec], async () => {
        const [{ waitMs }] = (
          await db.query(`SELECT extract(epoch FROM $1::timestamptz - clock_timestamp()) * 1000 AS "waitMs"`, [boundary])
        ).rows as Array<{ waitMs: number }>;
        if (waitMs < 0) ctx.log('  note: the worker booted after the boundary; lateness includes its boot');
        ctx.log(`  worker up; the slot is due in ${(Math.max(0, waitMs) / 1000).toFixed(1)} s`);
        // Each pending run's NOTIFY is sent when the pass transaction that inserted it commits: its arrival is when the run became visible.
        const visibleAt = new Map<string, number>();
        const listener = new Client(ctx.url('ours'));
        await listener.connect();
        listener.on('notification', (n) => {
          if (n.payload?.startsWith('schedule:') && !visibleAt.has(n.payload)) visibleAt.set(n.payload, Date.now());
        });
        await listener.query(`LISTEN ${wakeChannel(SCHEMA)}`);
        await delay(Math.max(0, waitMs));
        let allVisibleMs = 0;
        await until(
          async () => {
            const [row] = (
              await db.query(
                `SELECT count(*)::int AS n, extract(epoch FROM clock_timestamp() - $1::timestamptz) * 1000 AS since
                 FROM ${t.runs} WHERE workflow = '${WORKFLOW}' AND id LIKE 'schedule:%'`,
                [boundary],
              )
            ).rows as Array<{ n: number; since: number }>;
            allVisibleMs = Number(row.since);
            return row.n >= plan.schedules;
          },
          'every slot to start its run',
          120_000,
          50,
        );
        await until(async () => visibleAt.size >= plan.schedules, "every run's NOTIFY", 10_000, 20);
        await listener.end();
        const visible = [...visibleAt.values()].map((at) => at - boundary.getTime());
        const [row] = (
          await db.query(
            `SELECT count(*)::int AS runs, count(DISTINCT created_at)::int AS transactions,
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95
             FROM (SELECT created_at, extract(epoch FROM created_at - $1::timestamptz) * 1000 AS ms
                   FROM ${t.runs} WHERE workflow = '${WORKFLOW}' AND id LIKE 'schedule:%') r`,
            [boundary],
          )
        ).rows as Array<Record<string, number>>;
        const figure = {
          schedules: plan.schedules,
          sweeperMs,
          batch,
          workerConcurrency: plan.workerConcurrency,
          runs: Number(row.runs),
          latenessMs: {
            min: round(Math.min(...visible), 1),
            p50: round(percentile(visible, 50), 1),
            p95: round(percentile(visible, 95), 1),
            max: round(Math.max(...visible), 1),
          },
          insertStartMs: { p50: round(Number(row.p50), 1), p95: round(Number(row.p95), 1) },
          allVisibleMs: round(allVisibleMs, 0),
          transactions: Number(row.transactions),
        };
        ctx.log(
          `  ${figure.runs} slots fired, visible (committed) late: min ${figure.latenessMs.min} ms, p50 ${figure.latenessMs.p50} ms, p95 ${figure.latenessMs.p95} ms, max ${figure.latenessMs.max} ms (sweeper ${sweeperMs} ms); all visible ${figure.allVisibleMs} ms after the slot, ${figure.transactions} pass transactions`,
        );
        return figure;
      });
    });
    return figures;
  } finally {
    await pool.end();
    await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
    await db.end();
  }
}
