import { runDurableMigrations } from 'nestjs-durable';
import { finishRunSql, finishRunsSql } from 'nestjs-durable/persistence/sql/finish-run.sql';
import { parkRunSql, scheduleRetrySql } from 'nestjs-durable/persistence/sql/park-run.sql';
import { reclaimDeliveredRunSql } from 'nestjs-durable/persistence/sql/reclaim-delivered-run.sql';
import { releaseRunsSql, renewLeasesSql } from 'nestjs-durable/persistence/sql/renew-leases.sql';
import { reclaimStartedRunsSql } from 'nestjs-durable/persistence/sql/start-run.sql';
import { mendSlotsSql } from 'nestjs-durable/persistence/sql/mend-queue-slots.sql';
import { queuesWithWorkSql } from 'nestjs-durable/persistence/sql/admit-queued.sql';
import { startQueuedRunsSql } from 'nestjs-durable/persistence/sql/start-queued-runs.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, Db, uniqueSchema } from '../setup/durable-app';
import { plannedOn, planNodes } from '../setup/plans';

const RUNNING = 2_000;
/** Both indexes hold exactly the pending runs of the queues (migration 19): either answers a probe for one with its first entry. */
const QUEUE_PENDING_INDEXES: Record<string, string> = { runs_queue_partition_idx: 'runs_queue_pending_idx' };

/**
 * The statements that find their runs by primary key and test that they are running, and the probes
 * beside them for other runs through a partial index on a status. Statistics taken while no run was
 * running, pending or waiting (a quiet minute; a young table) made the planner read an index on the
 * status and filter on the rest: each end or park read every running run (until `statusIn`), and a
 * freed slot's look for a pending run of its queue read every pending run of every queue (until the
 * listing's index was keyed on `lower(status)`, migration 18).
 */
describe('statements that find their runs by primary key or a partial index read only those runs, whatever the statistics say of the statuses', () => {
  const schema = uniqueSchema('probes');
  const db = new Db(schema);
  const t = tablesFor(schema);
  const end = { id: 'run-1', token: 1, status: 'completed', output: '1', error: null, actor: 'w', grace_ms: null, checkpoint: null };
  const queuedStart = {
    ord: 1,
    id: 'new-1',
    workflow: 'w',
    input: '1',
    owner: 'w',
    lease_ms: 30000,
    actor: 'w',
    queue: 'q',
    slots: 4,
    priority: 0,
    includes_queue: false,
  };
  // Each statement's reads of runs: by primary key, and the partial index of each probe for other runs
  // (a pending run of a freed slot's queue, a run parked on the ended one that it did not start, a fork
  // of the ended child's parent selecting on it).
  const statements: Array<[string, string, string, string[]]> = [
    [
      'lone_end',
      finishRunSql(t),
      `('run-1', 1, 'completed', '1', null, 'w', null, 'c', null, 'q')`,
      ['runs_forked_from_idx', 'runs_pkey', 'runs_queue_pending_idx', 'runs_waiting_idx'],
    ],
    [
      'lone_lean_end',
      finishRunSql(t, { parentless: true, unqueued: true }),
      `('run-1', 1, 'completed', '1', null, 'w', null, 'c', null)`,
      ['runs_pkey', 'runs_waiting_idx'],
    ],
    [
      'batch_end',
      finishRunsSql(t),
      `('${JSON.stringify([end])}', 'c', 'q')`,
      ['runs_forked_from_idx', 'runs_pkey', 'runs_queue_pending_idx', 'runs_waiting_idx'],
    ],
    [
      'batch_lean_end',
      finishRunsSql(t, { parentless: true, unqueued: true }),
      `('${JSON.stringify([end])}', 'c')`,
      ['runs_pkey', 'runs_waiting_idx'],
    ],
    [
      'batch_queued_end',
      finishRunsSql(t, { parentless: true }),
      `('${JSON.stringify([end])}', 'c', 'q')`,
      ['runs_pkey', 'runs_queue_pending_idx', 'runs_waiting_idx'],
    ],
    [
      'park',
      parkRunSql(t),
      `('run-1', 1, '{"kind":"signal"}', 'signal', 'go', null, 0, 'w', null, 'q')`,
      ['runs_pkey', 'runs_queue_pending_idx'],
    ],
    [
      'park_on_child',
      parkRunSql(t),
      `('run-1', 1, '{"kind":"child"}', 'child', 'child-1', null, 0, 'w', null, 'q')`,
      ['runs_pkey', 'runs_queue_pending_idx'],
    ],
    [
      'park_on_select',
      parkRunSql(t),
      `('run-1', 1, '{"kind":"select","arms":[{"kind":"child","name":"child-1"}]}', 'select', null, null, 0, 'w', null, 'q')`,
      ['runs_pkey', 'runs_queue_pending_idx'],
    ],
    ['retry', scheduleRetrySql(t), `('run-1', 1, '{}', 1000, 'w', 'q')`, ['runs_pkey', 'runs_queue_pending_idx']],
    ['renew', renewLeasesSql(t), `('w', ARRAY['run-1'], ARRAY[1]::bigint[], 30000, '{}', null)`, ['runs_pkey']],
    ['release', releaseRunsSql(t), `('w', ARRAY['run-1'], ARRAY[1]::bigint[], 'q')`, ['runs_pkey', 'runs_queue_pending_idx']],
    ['reclaim_delivered', reclaimDeliveredRunSql(t), `('run-1', 'w', 30000, 'call')`, ['runs_pkey']],
    ['reclaim_started', reclaimStartedRunsSql(t), `('[{"ord":1,"id":"run-1","workflow":"w","input":"1"}]', 'w', 30000)`, ['runs_pkey']],
    ['mend_slots', mendSlotsSql(t)[0], `('q', 4)`, ['runs_pkey']],
    [
      'queued_start_batch',
      startQueuedRunsSql(t, '100ms'),
      `('${JSON.stringify([queuedStart])}', 'q')`,
      ['runs_pkey', 'runs_queue_pending_idx'],
    ],
    ['queues_with_work', queuesWithWorkSql(t), `(ARRAY['q'])`, ['runs_queue_pending_idx', 'runs_queue_waking_idx']],
  ];

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, finished_at) SELECT 'done-' || g, 'w', 'completed', '1', now() FROM generate_series(1, 20000) g`,
    );
    await db.query(`ANALYZE ${t.runs}`);
    // Unseen by the statistics: runs running in queue q (each holds a slot, as executing queued runs do),
    // a backlog pending in another queue, and runs parked on children that are not the runs above.
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, lease_owner, lease_token, wake_at, queue)
       SELECT 'run-' || g, 'w', 'running', '1', 'w', 1, now() + interval '30 seconds', 'q' FROM generate_series(1, ${RUNNING}) g`,
    );
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue)
       SELECT 'backlog-' || g, 'w', 'pending', '1', now(), 'other' FROM generate_series(1, ${RUNNING}) g`,
    );
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wait, wait_kind, wait_name)
       SELECT 'parent-' || g, 'w', 'waiting', '1', '{"kind":"child"}', 'child', 'child-' || g FROM generate_series(1, ${RUNNING}) g`,
    );
  });
  afterAll(() => db.dropSchema());

  /** The indexes each statement reads runs through (a sequential scan by its node type), in plan mode `mode`. */
  const readsOf = async (mode: string) => {
    await db.query(`SET plan_cache_mode = ${mode}`);
    const byStatement: Record<string, string[]> = {};
    for (const [name, sql, args] of statements) {
      await db.query(`PREPARE ${name}_${mode} AS ${sql}`);
      const reads = (await plannedOn(db, `${name}_${mode}`, args, 'runs')).filter((n) => n.type.endsWith('Scan'));
      byStatement[name] = [...new Set(reads.map((n) => QUEUE_PENDING_INDEXES[n.index!] ?? n.index ?? n.type))].sort();
    }
    return byStatement;
  };
  const expected = Object.fromEntries(statements.map(([name, , , indexes]) => [name, indexes]));

  it('generic plans go through runs_pkey and the partial index of each probe, never a scan of a status', async () => {
    expect(await readsOf('force_generic_plan')).toEqual(expected);
  });

  it('custom plans go through runs_pkey and the partial index of each probe, never a scan of a status', async () => {
    expect(await readsOf('force_custom_plan')).toEqual(expected);
  });

  it("an end of a queued run reads its own run's row, not the running runs, the other queue's backlog or the parked runs", async () => {
    const values = ['', "'run-7'", '1', "'completed'", "'1'", 'null', "'w'", 'null', "'c'", 'null', "'q'"];
    let read: number[];
    await db.query('BEGIN');
    try {
      const nodes = await planNodes(
        db,
        `EXPLAIN (ANALYZE, FORMAT JSON) ${finishRunSql(t).replace(/\$(\d+)/g, (_, n: string) => values[Number(n)])}`,
      );
      read = nodes.filter((n) => n.relation === 'runs' && n.type.endsWith('Scan')).map((n) => n.rowsRead!);
    } finally {
      await db.query('ROLLBACK');
    }
    // Each read (the end's update, its parent's and parked runs' probes, the freed slot's look for a pending run of q) finds at most one row.
    expect(read.length).toBeGreaterThan(3);
    expect(Math.max(...read)).toBeLessThanOrEqual(1);
    expect(await db.count('runs', `status = 'running'`)).toBe(RUNNING);
  });
});
