import { Client, PoolClient } from 'pg';
import { DurableWorkflow, runDurableMigrations, Workflow } from 'nestjs-durable';
import { cancelSql, cascade } from 'nestjs-durable/persistence/run-control.repository';
import { READ_COMMITTED } from 'nestjs-durable/persistence/durable-database';
import { ADMISSION_PLANS_SQL, admitQueuedSql, lockQueuesSql } from 'nestjs-durable/persistence/sql/admit-queued.sql';
import { finishRunSql } from 'nestjs-durable/persistence/sql/finish-run.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { plannedOn } from '../setup/plans';

@Workflow('wide-queue-noop')
class Noop implements DurableWorkflow<null, number> {
  async run() {
    return 1;
  }
}

describe("a queued run's end gives its slot back by its holder", () => {
  const schema = uniqueSchema('slots');
  const db = new Db(schema);
  let app: DurableTestApp;

  beforeAll(async () => {
    app = await startApp({ schema, providers: [Noop], options: { queues: { wide: { concurrency: 2_000 } } } });
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  it("through the holder index, not a read of the queue's 2,000 slots, and the slot is free again", async () => {
    await db.query(`ANALYZE durable.queue_slots`);
    await db.query(`SET plan_cache_mode = force_generic_plan`);
    await db.query(`PREPARE queued_end AS ${finishRunSql(tablesFor(schema))}`);
    // Every index the release reads (an index scan, or a bitmap's) is the holder's; no scan of the table's rows.
    const released = (await plannedOn(db, 'queued_end', `('x', 1, 'completed', '1', null, 'w', null, 'c', null, 'q')`)).filter(
      (n) => n.cte === 'CTE released',
    );
    expect([...new Set(released.flatMap((n) => (n.index ? [n.index] : [])))]).toEqual(['queue_slots_holder_idx']);
    expect(released.filter((n) => n.type === 'Seq Scan')).toEqual([]);

    const run = await app.client.start(Noop, null, { queue: 'wide' });
    expect(await run.result()).toBe(1);
    expect(await db.count('queue_slots', `queue = 'wide' AND holder IS NOT NULL`)).toBe(0);
    expect(await db.count('queue_slots', `queue = 'wide'`)).toBe(2_000);
  });
});

describe('a cancel that waited on its run while an admission gave the run a slot', () => {
  const schema = uniqueSchema('slotcancel');
  const db = new Db(schema);
  const t = tablesFor(schema);
  const admission = new Client(databaseUrl());
  const canceller = new Client(databaseUrl());
  const listener = new Client(databaseUrl());

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    await Promise.all([admission.connect(), canceller.connect(), listener.connect()]);
  });
  afterAll(async () => {
    await Promise.all([admission.end(), canceller.end(), listener.end()]);
    await db.dropSchema();
  });

  it('gives the slot back and NOTIFYs the queue, though the run was pending in the snapshot of the statement that cancelled it', async () => {
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.payload!));
    await listener.query(`LISTEN "${schema}:queues"`);
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue)
       VALUES ('first', 'w', 'pending', '1', now() - interval '2 seconds', 'one'), ('next', 'w', 'pending', '1', now() - interval '1 second', 'one')`,
    );
    await db.query(`INSERT INTO ${t.queueSlots} (queue, slot) VALUES ('one', 1)`);
    // The admission gives the first run the slot and holds its row until it commits.
    await admission.query(`BEGIN; ${lockQueuesSql(schema, ['one'])}; ${ADMISSION_PLANS_SQL}`);
    const { rows: admitted } = await admission.query<{ id: string }>(admitQueuedSql(t), [
      'one',
      1,
      null,
      null,
      null,
      1,
      ['w'],
      'owner',
      30_000,
      100,
    ]);
    expect(admitted.map((r) => r.id)).toEqual(['first']);
    const { pid } = (await canceller.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0];
    // As RunControlRepository.cancel does it: the cascade of statements in one READ COMMITTED transaction.
    const cancelling = (async () => {
      await canceller.query(`BEGIN; ${READ_COMMITTED}`);
      const row = await cascade(canceller as unknown as PoolClient, cancelSql(t), [
        'first',
        'no',
        'op',
        'wake',
        null,
        `${schema}:queues`,
        `${schema}:control`,
      ]);
      await canceller.query('COMMIT');
      return row;
    })();
    await eventually(
      async () => (await db.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid])).length > 0,
      "the cancel waiting on the run's row",
    );
    await admission.query('COMMIT');
    // The cancelling statement's snapshot was taken before the admission committed: it saw the run pending.
    expect(await cancelling).toEqual({ previous: 'pending', changed: ['first'], ended: ['w'] });
    expect(await db.count('queue_slots', `queue = 'one' AND holder IS NOT NULL`)).toBe(0);
    await eventually(async () => heard.includes('one'), "the queue's NOTIFY (the next run is pending)");
  });
});
