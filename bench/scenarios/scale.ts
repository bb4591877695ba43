import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import type { BenchContext } from '../context';
import { until } from '../measure';
import { runDurableMigrations } from 'nestjs-durable';
import { claimRunsSql, DashboardRepository, DeliveryRepository, RunRepository, tablesFor } from '../scale/library-internals';
import { seedKeyedRuns, seedSleepingRuns } from '../scale/seed-runs';
import { standInDatabase } from '../scale/stand-in-database';
import { measureRunMemory, RunMemoryFigures } from './run-memory';
import { round, Spread, spread } from '../stats';

const WORKFLOWS = ['bench-three-steps', 'bench-await-go', 'bench-nap', 'bench-fan-out'];

export interface ScaleFigures {
  /** Runs the measured worker started, parked, then woke and completed: RSS and heap beyond an idle worker's. */
  runMemory?: RunMemoryFigures;
  claimQuery?: {
    waitingRows: number;
    batch: number;
    /** Nothing due: the sweep of a quiet system. */
    noneDue: ClaimTiming;
    /** `batch` runs due among the waiting rows: a sweep that claims a full batch. */
    batchDue: ClaimTiming;
  };
  /** The dashboard's /stats read (DashboardRepository.stats, as the service calls it) on the claim's table and on a small one. */
  statsRead?: {
    rows: number;
    smallRows: number;
    /** Its statements' round trips, wall clock, at `rows` and at `smallRows`. */
    wallMs: Spread;
    smallWallMs: Spread;
    /** The figures that came back as estimates at `rows`. */
    estimated: string[];
  };
  /** Business keys: lookups and signalByKeys over runs with five keys each (RunRepository, DeliveryRepository). */
  keysLookup?: {
    runs: number;
    seedSeconds: number;
    /** listRuns by a unique key, and by two keys shared by 20 runs: round trips. */
    byOneMs: Spread;
    byTwoMs: Spread;
    /** signalByKeys to every run of a key, recorded and woken: `fanOutSmall` and `fanOutLarge` runs. */
    fanOutSmall: number;
    fanOutSmallMs: Spread;
    fanOutLarge: number;
    fanOutLargeMs: Spread;
    /** EXPLAIN ANALYZE of the lookup by one key. */
    plan: string[];
  };
  simultaneousWakes?: {
    runs: number;
    instances: number;
    concurrencyEach: number;
    /** From the common wake instant to the last run's end. */
    drainMs: Spread;
    runsPerSecond: Spread;
    /** From the wake instant to the first claim: the sweeper's reaction. */
    firstClaimMs: Spread;
    /** Runs claimed more than once, over all repetitions ('claimed' history events). */
    duplicateClaims: number;
    claimStatements: Spread;
    perInstanceShare: number[];
  };
}

interface ClaimTiming {
  claimed: number;
  /** EXPLAIN ANALYZE execution time (server side). */
  executionMs: Spread;
  planningMs: Spread;
  /** The statement's round trip as the worker sees it. */
  wallMs: Spread;
  plan: string[];
}

/**
 * ours at scale, in schemas of its own in ours' database: (1) a worker's memory for
 * `parkedRuns` runs it parked and woke itself, against an idle worker (run-memory.ts); (2) the claim statement with
 * `waitingRows` waiting rows; (3) `simultaneousWakes` runs due at one instant, drained by two
 * instances, duplicate claims counted from the history table.
 */
export async function measureScale(ctx: BenchContext): Promise<ScaleFigures> {
  const db = new Client(ctx.url('ours'));
  await db.connect();
  try {
    const figures: ScaleFigures = {};
    figures.runMemory = await ctx.attempt('scale.runMemory', () => measureRunMemory(ctx, db));
    figures.claimQuery = await ctx.attempt('scale.claimQuery', () => claimQuery(ctx, db));
    figures.statsRead = await ctx.attempt('scale.statsRead', () => statsRead(ctx, db));
    figures.keysLookup = await ctx.attempt('scale.keysLookup', () => keysLookup(ctx, db));
    await db.query(`DROP SCHEMA IF EXISTS ${SCALE_SCHEMA} CASCADE`); // a million rows are not kept between runs
    figures.simultaneousWakes = await ctx.attempt('scale.simultaneousWakes', () => simultaneousWakes(ctx, db));
    return figures;
  } finally {
    await db.end();
  }
}

const SCALE_SCHEMA = 'bench_scale';

async function claimQuery(ctx: BenchContext, db: Client): Promise<ScaleFigures['claimQuery']> {
  const { plan } = ctx;
  const t = tablesFor(SCALE_SCHEMA);
  await db.query(`DROP SCHEMA IF EXISTS ${SCALE_SCHEMA} CASCADE`);
  await runDurableMigrations({ connection: ctx.url('ours'), schema: SCALE_SCHEMA });
  const t0 = performance.now();
  await seedSleepingRuns(db, SCALE_SCHEMA, {
    count: plan.waitingRows,
    prefix: 'waiting-',
    wakeAt: new Date(Date.now() + 86_400_000).toISOString(),
    spreadMs: 86_400_000,
  });
  ctx.log(`  seeded ${plan.waitingRows} waiting runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // What autovacuum would have done by now, for every table the seeding filled (a claim reads the journal too).
  for (const table of [t.runs, t.steps, t.history]) await db.query(`VACUUM ANALYZE ${table}`);
  await db.query('SET jit = off'); // as on the library's own connections (DurableDatabase)
  const batch = 100;
  const sql = claimRunsSql(t);
  const params = ['bench-claim', 30_000, batch, WORKFLOWS];
  const time = async (): Promise<ClaimTiming> => {
    const execution: number[] = [];
    const planning: number[] = [];
    const wall: number[] = [];
    let claimed = 0;
    let planText: string[] = [];
    // Each claim is rolled back, so every repetition claims the same rows from the same state.
    for (let i = 0; i < 2 + Math.max(5, plan.reps); i++) {
      await db.query('BEGIN');
      const t0 = performance.now();
      const result = await db.query(sql, params);
      const elapsed = performance.now() - t0;
      await db.query('ROLLBACK');
      await db.query('BEGIN');
      const explained = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'][0];
      await db.query('ROLLBACK');
      if (i < 2) continue; // warm-up
      wall.push(elapsed);
      execution.push(explained['Execution Time']);
      planning.push(explained['Planning Time']);
      claimed = result.rowCount ?? 0;
    }
    await db.query('BEGIN');
    planText = (await db.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${sql}`, params)).rows.map(
      (r) => r['QUERY PLAN'] as string,
    );
    await db.query('ROLLBACK');
    return { claimed, executionMs: spread(execution), planningMs: spread(planning), wallMs: spread(wall), plan: planText };
  };
  const noneDue = await time();
  await db.query(
    `UPDATE ${t.runs} SET wake_at = now() - interval '1 second' WHERE id IN (SELECT id FROM ${t.runs} WHERE status = 'waiting' ORDER BY wake_at LIMIT ${batch})`,
  );
  const batchDue = await time();
  ctx.log(
    `  claim with ${plan.waitingRows} waiting rows: none due ${noneDue.executionMs.median.toFixed(3)} ms, ${batch} due ${batchDue.executionMs.median.toFixed(3)} ms (EXPLAIN ANALYZE)`,
  );
  return { waitingRows: plan.waitingRows, batch, noneDue, batchDue };
}

const SMALL_SCHEMA = 'bench_small';
const SMALL_ROWS = 1_000;

/**
 * The dashboard's stats read over the claim measurement's million runs (left as it was: waiting, a
 * batch due), against the same read over a thousand: its cost should not follow the table's size.
 */
async function statsRead(ctx: BenchContext, db: Client): Promise<ScaleFigures['statsRead']> {
  const { plan } = ctx;
  await runDurableMigrations({ connection: ctx.url('ours'), schema: SMALL_SCHEMA });
  await seedSleepingRuns(db, SMALL_SCHEMA, {
    count: SMALL_ROWS,
    prefix: 'small-',
    wakeAt: new Date(Date.now() + 86_400_000).toISOString(),
    spreadMs: 86_400_000,
  });
  await db.query(`VACUUM ANALYZE ${tablesFor(SMALL_SCHEMA).runs}`);
  await db.query('SET jit = off');
  const time = async (schema: string) => {
    // The repository over this connection: the same statements and transactions the dashboard's service sends.
    const repository = new DashboardRepository(standInDatabase(schema, db) as never);
    const wall: number[] = [];
    let estimated: string[] = [];
    for (let i = 0; i < 2 + Math.max(5, plan.reps); i++) {
      const t0 = performance.now();
      const stats = await repository.stats(1_000, 30_000);
      if (i < 2) continue; // warm-up
      wall.push(performance.now() - t0);
      estimated = [
        ...stats.estimated.byStatus.map((s: string) => `byStatus.${s}`),
        ...stats.estimated.waitingByKind.map((k: string) => `waitingByKind.${k}`),
        ...(stats.estimated.overdue ? ['overdue'] : []),
      ];
    }
    return { wallMs: spread(wall), estimated };
  };
  const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM ${tablesFor(SCALE_SCHEMA).runs}`)).rows as Array<{ n: number }>;
  const large = await time(SCALE_SCHEMA);
  const small = await time(SMALL_SCHEMA);
  await db.query(`DROP SCHEMA ${SMALL_SCHEMA} CASCADE`);
  ctx.log(
    `  /stats read: ${large.wallMs.median.toFixed(2)} ms with ${n} runs (estimated: ${large.estimated.join(', ') || 'none'}), ${small.wallMs.median.toFixed(2)} ms with ${SMALL_ROWS}`,
  );
  return { rows: n, smallRows: SMALL_ROWS, wallMs: large.wallMs, smallWallMs: small.wallMs, estimated: large.estimated };
}

const KEYS_SCHEMA = 'bench_keys';

/**
 * `waitingRows` waiting runs with five keys each (seedKeyedRuns), then, through the library's own
 * repositories on this connection: listRuns by one key and by two, and signalByKeys to the 20 runs of
 * a customer and to the runs of a sku (a thousandth of them), a new key each time (every delivery accepted).
 */
async function keysLookup(ctx: BenchContext, db: Client): Promise<ScaleFigures['keysLookup']> {
  const { plan } = ctx;
  const runs = plan.waitingRows;
  await db.query(`DROP SCHEMA IF EXISTS ${KEYS_SCHEMA} CASCADE`);
  await runDurableMigrations({ connection: ctx.url('ours'), schema: KEYS_SCHEMA });
  const t0 = performance.now();
  await seedKeyedRuns(db, KEYS_SCHEMA, { count: runs });
  const seedSeconds = (performance.now() - t0) / 1000;
  await db.query(`VACUUM ANALYZE ${tablesFor(KEYS_SCHEMA).runs}`);
  const sent: Array<{ sql: string; params: unknown[] }> = [];
  const over = {
    tables: tablesFor(KEYS_SCHEMA),
    query: async (sql: string, params: unknown[] = []) => {
      sent.push({ sql, params });
      return (await db.query(sql, params)).rows;
    },
  } as never;
  const repository = new RunRepository(over);
  const deliveries = new DeliveryRepository(over);
  const reps = Math.max(5, plan.reps);
  const timed = async (run: (i: number) => Promise<unknown>) => {
    const wall: number[] = [];
    for (let i = 0; i < 2 + reps; i++) {
      const started = performance.now();
      await run(i);
      if (i >= 2) wall.push(performance.now() - started); // the first two warm up
    }
    return spread(wall);
  };
  const byOneMs = await timed((i) => repository.list({ keys: { orderId: `A-${1 + ((i * 7_919) % runs)}` } }));
  const lookup = sent[sent.length - 1];
  const byTwoMs = await timed((i) => repository.list({ keys: { customer: `c-${i}`, region: `r-${i % 20}` } }));
  const fanOut = (key: Record<string, string>) =>
    deliveries.signalByKeys(JSON.stringify(key), 'go', 'null', 'bench', ['bench-await-go'], { most: 1_000 });
  const fanOutSmallMs = await timed((i) => fanOut({ customer: `c-${100 + i}` }));
  const fanOutLargeMs = await timed((i) => fanOut({ sku: `s-${100 + i}` }));
  const explained = await db.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${lookup.sql}`, lookup.params);
  await db.query(`DROP SCHEMA ${KEYS_SCHEMA} CASCADE`);
  const figures = {
    runs,
    seedSeconds: round(seedSeconds, 1),
    byOneMs,
    byTwoMs,
    fanOutSmall: 20,
    fanOutSmallMs,
    fanOutLarge: Math.floor(runs / 1_000),
    fanOutLargeMs,
    plan: explained.rows.map((r: Record<string, string>) => r['QUERY PLAN']),
  };
  ctx.log(
    `  keys: lookup ${byOneMs.median.toFixed(2)} ms by one key, ${byTwoMs.median.toFixed(2)} ms by two, signalByKeys ${fanOutSmallMs.median.toFixed(1)} ms to 20 runs and ${fanOutLargeMs.median.toFixed(1)} ms to ${figures.fanOutLarge}, with ${runs} runs`,
  );
  return figures;
}

const WAKES_SCHEMA = 'bench_wakes';

async function simultaneousWakes(ctx: BenchContext, db: Client): Promise<ScaleFigures['simultaneousWakes']> {
  const { plan } = ctx;
  const t = tablesFor(WAKES_SCHEMA);
  const spec = { kind: 'ours' as const, concurrency: plan.drainConcurrency, schema: WAKES_SCHEMA };
  const figures = await ctx.with([spec, spec], async () => {
    const drain: number[] = [];
    const rates: number[] = [];
    const firstClaim: number[] = [];
    const claimStatements: number[] = [];
    const shares: number[] = [];
    let duplicates = 0;
    for (let rep = 0; rep < plan.reps; rep++) {
      await db.query(`TRUNCATE ${t.runs}, ${t.steps}, ${t.history}`);
      const [{ at }] = (await db.query(`SELECT (now() + interval '3 seconds') AS at`)).rows as Array<{ at: Date }>;
      await seedSleepingRuns(db, WAKES_SCHEMA, {
        count: plan.simultaneousWakes,
        prefix: `wake-${rep}-`,
        wakeAt: at.toISOString(),
        spreadMs: 1,
      });
      const [{ late }] = (await db.query(`SELECT clock_timestamp() > $1::timestamptz AS late`, [at])).rows as Array<{ late: boolean }>;
      if (late) ctx.log('  note: seeding ended after the wake instant; the drain time includes the overrun');
      await until(
        async () => (await db.query(`SELECT 1 FROM ${t.runs} WHERE status <> 'completed' LIMIT 1`)).rowCount === 0,
        'the due runs to drain',
        600_000,
        100,
      );
      const [row] = (
        await db.query(
          `SELECT extract(epoch FROM (SELECT max(finished_at) FROM ${t.runs}) - $1::timestamptz) * 1000 AS drain_ms,
                extract(epoch FROM (SELECT min(at) FROM ${t.history} WHERE event = 'claimed') - $1::timestamptz) * 1000 AS first_claim_ms,
                (SELECT count(*) FROM ${t.history} WHERE event = 'claimed') AS claims,
                (SELECT count(DISTINCT run_id) FROM ${t.history} WHERE event = 'claimed') AS claimed_runs,
                (SELECT count(DISTINCT at) FROM ${t.history} WHERE event = 'claimed') AS statements,
                (SELECT max(n) FROM (SELECT count(*) AS n FROM ${t.history} WHERE event = 'claimed' GROUP BY actor) a) AS busiest`,
          [at],
        )
      ).rows as Array<Record<string, string>>;
      const drainMs = Number(row.drain_ms);
      drain.push(drainMs);
      rates.push((plan.simultaneousWakes * 1000) / drainMs);
      firstClaim.push(Number(row.first_claim_ms));
      claimStatements.push(Number(row.statements));
      duplicates += Number(row.claims) - Number(row.claimed_runs);
      shares.push(round(Number(row.busiest) / plan.simultaneousWakes, 3));
      ctx.log(
        `  ${plan.simultaneousWakes} wakes: drained in ${drainMs.toFixed(0)} ms, ${Number(row.claims) - Number(row.claimed_runs)} duplicate claims, ${row.statements} claim statements`,
      );
    }
    return {
      runs: plan.simultaneousWakes,
      instances: 2,
      concurrencyEach: plan.drainConcurrency,
      drainMs: spread(drain),
      runsPerSecond: spread(rates),
      firstClaimMs: spread(firstClaim),
      duplicateClaims: duplicates,
      claimStatements: spread(claimStatements),
      perInstanceShare: shares,
    };
  });
  await db.query(`DROP SCHEMA ${WAKES_SCHEMA} CASCADE`);
  return figures;
}
