import { Client } from 'pg';
import { runDurableMigrations } from 'nestjs-durable';
import { QueueRepository } from 'nestjs-durable/persistence/queue.repository';
import { ADMISSION_PLANS_SQL, admitQueuedSql, lockQueuesSql } from 'nestjs-durable/persistence/sql/admit-queued.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, Db, DurableTestApp, eventually, repeatableReadRole, startApp, uniqueSchema } from '../setup/durable-app';

/** The admission's locks: the queue's, then the runs it takes, without waiting on a row another transaction holds. */
describe('an admission that chose a run whose row another transaction holds', () => {
  const schema = uniqueSchema('slotheld');
  const db = new Db(schema);
  const t = tablesFor(schema);
  const admission = new Client(databaseUrl());
  const holder = new Client(databaseUrl());

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    await Promise.all([admission.connect(), holder.connect()]);
  });
  afterAll(async () => {
    await Promise.all([admission.end(), holder.end()]);
    await db.dropSchema();
  });

  const admit = async () => {
    await admission.query(`BEGIN; ${lockQueuesSql(schema, ['one'])}; ${ADMISSION_PLANS_SQL}; SET LOCAL lock_timeout = '5s'`);
    const { rows } = await admission.query<{ id: string }>(admitQueuedSql(t), ['one', 1, null, null, null, 1, ['w'], 'owner', 30_000, 100]);
    await admission.query('COMMIT');
    return rows.map((r) => r.id);
  };

  it('passes it by without waiting (the queue stays free for the next admission, which takes it once the row is let go)', async () => {
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue) VALUES ('first', 'w', 'pending', '1', now() - interval '1 second', 'one')`,
    );
    await db.query(`INSERT INTO ${t.queueSlots} (queue, slot) VALUES ('one', 1)`);
    // As an application's transaction holds a run it delivered a signal to, until it commits.
    await holder.query(`BEGIN; SELECT 1 FROM ${t.runs} WHERE id = 'first' FOR UPDATE`);
    // Waiting for the row held the queue's lock, and the instance's claim pass, as long as that transaction (here,
    // until the lock_timeout failed the admission).
    expect(await admit()).toEqual([]);
    expect(await db.count('queue_slots', `queue = 'one' AND holder IS NULL`)).toBe(1);
    await holder.query('COMMIT');
    expect(await admit()).toEqual(['first']);
    expect(await db.count('queue_slots', `queue = 'one' AND holder = 'first'`)).toBe(1);
  });
});

describe('an admission on a database whose default isolation is repeatable read', () => {
  const schema = uniqueSchema('admrr');
  const db = new Db(schema);
  const t = tablesFor(schema);
  const locker = new Client(databaseUrl());
  let app: DurableTestApp;
  let role: Awaited<ReturnType<typeof repeatableReadRole>>;

  beforeAll(async () => {
    role = await repeatableReadRole(`${schema}_rr`);
    // No worker: the test calls the admission itself.
    app = await startApp({
      schema,
      options: { connection: role.url, worker: { enabled: false }, queues: { one: { concurrency: 1 } } },
    });
    await locker.connect();
  });
  afterAll(async () => {
    await app.close();
    await locker.end();
    await db.dropSchema();
    await role.drop();
  });

  it("takes its snapshot after the queue's lock: it admits what was committed while it waited for the lock", async () => {
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue) VALUES ('first', 'w', 'pending', '1', now() - interval '1 second', 'one')`,
    );
    await db.query(`INSERT INTO ${t.queueSlots} (queue, slot) VALUES ('one', 1) ON CONFLICT DO NOTHING`);
    // Another admission holds the queue's lock; while this one waits for it, the first run is cancelled and a second enters.
    await locker.query(`BEGIN; ${lockQueuesSql(schema, ['one'])}`);
    const queue = { name: 'one', concurrency: 1, partitionConcurrency: null, rateLimit: null };
    const admitting = app.get(QueueRepository).admit([queue], 'owner', 30_000, 1, ['w'], { probe: false });
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND query LIKE $1`,
            [`%${schema}%`],
          )
        ).length > 0,
      "the admission waiting for the queue's lock",
    );
    await locker.query(`UPDATE ${t.runs} SET status = 'cancelled', finished_at = now() WHERE id = 'first'`);
    await locker.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue) VALUES ('second', 'w', 'pending', '1', now(), 'one')`,
    );
    await locker.query('COMMIT');
    // Under repeatable read its snapshot was taken by the lock's statement, before the wait: it saw the first run pending
    // and failed on it (could not serialize access due to concurrent update).
    expect((await admitting).claimed.map((r) => r.id)).toEqual(['second']);
  });
});
