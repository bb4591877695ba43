import { runDurableMigrations } from 'nestjs-durable';
import { finishRunSql, finishRunsSql } from 'nestjs-durable/persistence/sql/finish-run.sql';
import { parkRunSql, scheduleRetrySql } from 'nestjs-durable/persistence/sql/park-run.sql';
import { reclaimDeliveredRunSql } from 'nestjs-durable/persistence/sql/reclaim-delivered-run.sql';
import { releaseRunsSql, renewLeasesSql } from 'nestjs-durable/persistence/sql/renew-leases.sql';
import { reclaimStartedRunsSql } from 'nestjs-durable/persistence/sql/start-run.sql';
import { mendSlotsSql } from 'nestjs-durable/persistence/sql/mend-queue-slots.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, Db, uniqueSchema } from '../setup/durable-app';
import { plannedOn, planNodes } from '../setup/plans';

const RUNNING = 2_000;

/**
 * The statements that find their runs by primary key and test that they are running. Statistics taken
 * while no run was running (a quiet minute; a young table) made the planner read runs_status_idx for
 * `status = 'running'` and filter on the id, so each end or park read every running run.
 */
describe('statements that find their runs by primary key read only those runs, whatever the statistics say of running runs', () => {
  const schema = uniqueSchema('probes');
  const db = new Db(schema);
  const t = tablesFor(schema);
  const end = { id: 'run-1', token: 1, status: 'completed', output: '1', error: null, actor: 'w', grace_ms: null, checkpoint: null };
  const statements: Array<[string, string, string]> = [
    ['lone_end', finishRunSql(t), `('run-1', 1, 'completed', '1', null, 'w', null, 'c', null, 'q')`],
    ['lone_standalone_end', finishRunSql(t, true), `('run-1', 1, 'completed', '1', null, 'w', null, 'c', null)`],
    ['batch_end', finishRunsSql(t), `('${JSON.stringify([end])}', 'c', 'q')`],
    ['batch_standalone_end', finishRunsSql(t, true), `('${JSON.stringify([end])}', 'c')`],
    ['park', parkRunSql(t), `('run-1', 1, '{"kind":"signal"}', 'signal', 'go', null, 0, 'w', null, 'q')`],
    ['retry', scheduleRetrySql(t), `('run-1', 1, '{}', 1000, 'w', 'q')`],
    ['renew', renewLeasesSql(t), `('w', ARRAY['run-1'], ARRAY[1]::bigint[], 30000, '{}', null)`],
    ['release', releaseRunsSql(t), `('w', ARRAY['run-1'], ARRAY[1]::bigint[], 'q')`],
    ['reclaim_delivered', reclaimDeliveredRunSql(t), `('run-1', 'w', 30000, 'call')`],
    ['reclaim_started', reclaimStartedRunsSql(t), `('[{"ord":1,"id":"run-1","workflow":"w","input":"1"}]', 'w', 30000)`],
    ['mend_slots', mendSlotsSql(t)[0], `('q', 4)`],
  ];

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, finished_at) SELECT 'done-' || g, 'w', 'completed', '1', now() FROM generate_series(1, 20000) g`,
    );
    await db.query(`ANALYZE ${t.runs}`);
    // Running now, unseen by the statistics: each holds a slot of queue q, as executing queued runs do.
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, lease_owner, lease_token, wake_at, queue)
       SELECT 'run-' || g, 'w', 'running', '1', 'w', 1, now() + interval '30 seconds', 'q' FROM generate_series(1, ${RUNNING}) g`,
    );
  });
  afterAll(() => db.dropSchema());

  /** The runs each statement reads, by index, in plan mode `mode`. */
  const readsOf = async (mode: string) => {
    await db.query(`SET plan_cache_mode = ${mode}`);
    const byStatement: Record<string, string[]> = {};
    for (const [name, sql, args] of statements) {
      await db.query(`PREPARE ${name}_${mode} AS ${sql}`);
      // Not the probes for other runs through a partial index on a status (which needs the status written
      // plainly): a pending run of a freed slot's queue (queueSlotFreedSql), a run parked on an ended run
      // it did not start (wakeParentSql). With these statistics they read runs_status_idx too.
      const reads = (await plannedOn(db, `${name}_${mode}`, args, 'runs')).filter(
        (n) => n.type.endsWith('Scan') && n.cte !== 'CTE freed' && n.cte !== 'CTE reusing_fork',
      );
      byStatement[name] = [...new Set(reads.map((n) => n.index ?? n.type))];
    }
    return byStatement;
  };
  const throughPrimaryKey = Object.fromEntries(statements.map(([name]) => [name, ['runs_pkey']]));

  it('generic plans go through runs_pkey only, never a scan of the running runs', async () => {
    expect(await readsOf('force_generic_plan')).toEqual(throughPrimaryKey);
  });

  it('custom plans go through runs_pkey only, never a scan of the running runs', async () => {
    expect(await readsOf('force_custom_plan')).toEqual(throughPrimaryKey);
  });

  it("an end reads its own run's row, not the 2,000 running runs", async () => {
    const values = ['', "'run-7'", '1', "'completed'", "'1'", 'null', "'w'", 'null', "'c'", 'null'];
    let read: number[];
    await db.query('BEGIN');
    try {
      const nodes = await planNodes(
        db,
        `EXPLAIN (ANALYZE, FORMAT JSON) ${finishRunSql(t, true).replace(/\$(\d+)/g, (_, n: string) => values[Number(n)])}`,
      );
      read = nodes.filter((n) => n.relation === 'runs' && n.type.endsWith('Scan')).map((n) => n.rowsRead!);
    } finally {
      await db.query('ROLLBACK');
    }
    // Each read (the end's update, the probe of a try whose answer was lost, the parked runs' probe) finds at most its one row.
    expect(read.length).toBeGreaterThan(0);
    expect(Math.max(...read)).toBe(1);
    expect(await db.count('runs', `status = 'running'`)).toBe(RUNNING);
  });
});
