import { runDurableMigrations } from 'nestjs-durable';
import { DashboardService } from 'nestjs-durable/dashboard/dashboard.service';
import { STATS_EXACT_UP_TO, STATS_PLANS_SQL, statsSql } from 'nestjs-durable/persistence/dashboard.repository';
import { RUN_STATUSES } from 'nestjs-durable/persistence/run.repository';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { WAIT_KIND_NAMES } from 'nestjs-durable/wait-kinds/wait-kind.registry';
import { databaseUrl, Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';
import { planNodes } from '../setup/plans';

describe('dashboard stats: a cost that does not grow with the table', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, options: { dashboard: { auth: { insecureNoAuth: true } } } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('counts are exact up to the cap and estimates past it, said so; a queue counts its pending runs; the oldest waiting run is the one that waits longest', async () => {
    const past = STATS_EXACT_UP_TO + 2_000;
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, finished_at) SELECT 'done-' || i, 'w', 'completed', 'null', now() FROM generate_series(1, $1) i`,
      [past],
    );
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wait, wait_kind, wait_name)
       SELECT 'waits-' || i, 'w', 'waiting', 'null', jsonb_build_object('kind', 'signal', 'name', 'go', 'since', now() - i * interval '1 minute'), 'signal', 'go'
       FROM generate_series(1, 3) i`,
    );
    // Waiting in a queue is pending, its reason worked out when read (never stored): counted as waiting for the queue.
    await db.query(`INSERT INTO durable.runs (id, workflow, status, input, queue) VALUES ('queued-1', 'w', 'pending', 'null', 'q')`);
    await db.query(`ANALYZE durable.runs`);

    const stats = await t.get(DashboardService).stats();
    expect(stats.estimated).toEqual({ byStatus: ['completed'], waitingByKind: [], overdue: false });
    expect(stats.byStatus.completed).toBeGreaterThanOrEqual(STATS_EXACT_UP_TO);
    expect(Math.abs(stats.byStatus.completed - past) / past).toBeLessThan(0.2);
    expect(stats.byStatus).toMatchObject({ waiting: 3, pending: 1, running: 0, failed: 0, cancelled: 0 });
    expect(stats.waitingByKind).toMatchObject({ signal: 3, sleep: 0, queue: 1 });
    expect(stats.oldestWaiting).toMatchObject({ runId: 'waits-3' });
  });
});

describe("dashboard stats: each count reads an index's entries, never the table's rows", () => {
  const schema = uniqueSchema('statsplan');
  const db = new Db(schema);
  const t = tablesFor(schema);

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    // The waiting runs first, then finished ones: a walk of runs_seq_key from the newest passes every
    // finished run before it meets one that waits. ANALYZE alone leaves the visibility map unset, as a
    // long transaction elsewhere would (Postgres then prices an index-only scan as one that reads the table).
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wait, wait_kind, wait_name)
       SELECT 'waits-' || i, 'w', 'waiting', 'null', jsonb_build_object('kind', 'sleep', 'name', 'nap', 'since', now()), 'sleep', 'nap'
       FROM generate_series(1, 15000) i`,
    );
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, finished_at) SELECT 'done-' || i, 'w', 'completed', 'null', now() FROM generate_series(1, 60000) i`,
    );
    await db.query(`ANALYZE ${t.runs}`);
  });
  afterAll(() => db.dropSchema());

  it('the counts by status and by wait kind read their index ranges, never past the cap, in a custom and in the generic plan', async () => {
    await db.query(`PREPARE stats(bigint, bigint, int) AS ${statsSql(t)}`);
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await db.query(`BEGIN; SET LOCAL plan_cache_mode = ${mode}; ${STATS_PLANS_SQL}`);
      const nodes = await planNodes(db, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE stats(2000, 30000, ${STATS_EXACT_UP_TO})`);
      await db.query('ROLLBACK');
      const scans = nodes.filter((n) => n.relation === 'runs' && n.type.endsWith('Scan'));
      // A status or wait kind with no runs reads none; the counts of the waiting and the completed runs stop at the cap.
      expect(scans.filter((n) => n.type === 'Seq Scan')).toEqual([]);
      expect(scans.filter((n) => n.rowsRead! > STATS_EXACT_UP_TO)).toEqual([]);
      expect(scans.length).toBeGreaterThanOrEqual(RUN_STATUSES.length + WAIT_KIND_NAMES.length);
    }
  });
});
