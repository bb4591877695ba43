import { Client } from 'pg';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { retryTransient } from 'nestjs-durable/persistence/transient-retry';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/**
 * Postgres breaks a deadlock by rolling back one of its transactions whole (40P01). The library's
 * writes outside the journal and its lease renewals go through retryTransient, which must take that
 * victim for a blip and try again, not fail the caller.
 */
describe('deadlocks', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  const sessions: Client[] = [];
  const session = async () => {
    const client = new Client({ connectionString: databaseUrl() });
    await client.connect();
    await client.query(`SET deadlock_timeout = '100ms'`);
    sessions.push(client);
    return client;
  };

  beforeAll(async () => {
    await db.query(`CREATE SCHEMA ${schema}`);
    await db.query(`CREATE TABLE ${schema}.rows (id int PRIMARY KEY, n int NOT NULL)`);
    await db.query(`INSERT INTO ${schema}.rows VALUES (1, 0), (2, 0)`);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.end()));
    await db.dropSchema();
  });

  it('a statement that loses a deadlock is retried whole and lands once', async () => {
    const [a, b] = [await session(), await session()];
    let tries = 0;
    // Each side locks one row, waits until the other holds its row too, then asks for the other's:
    // Postgres rolls one of them back with 40P01. A retried try finds the barrier open.
    let locked = 0;
    let bothLocked!: () => void;
    const barrier = new Promise<void>((resolve) => (bothLocked = resolve));
    const side = (client: Client, first: number, second: number) =>
      retryTransient(async () => {
        tries++;
        await client.query('BEGIN');
        try {
          await client.query(`UPDATE ${schema}.rows SET n = n + 1 WHERE id = $1`, [first]);
          if (++locked === 2) bothLocked();
          await barrier;
          await client.query(`UPDATE ${schema}.rows SET n = n + 1 WHERE id = $1`, [second]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
      });
    await Promise.all([side(a, 1, 2), side(b, 2, 1)]);

    expect(tries).toBe(3); // the victim tried twice
    expect(await db.query(`SELECT id, n FROM ${schema}.rows ORDER BY id`)).toEqual([
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
  });
});

@Workflow('awaits-approval')
class AwaitsApproval implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal('approval');
  }
}

describe('an operator action that loses a deadlock', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  beforeAll(async () => {
    t = await startApp({ schema, providers: [AwaitsApproval] });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('is tried again and lands once, instead of answering the deadlock', async () => {
    const run = await t.client.start(AwaitsApproval, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to park');
    // Postgres' own deadlock error, raised once by the statement that cancels (a cascade locking a
    // child and a parent against a finishing child can meet one); a sequence counts across rollbacks.
    await db.query(`CREATE SEQUENCE durable.faults`);
    await db.query(`CREATE FUNCTION durable.deadlock_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('"${schema}".faults') = 1 THEN RAISE EXCEPTION 'deadlock detected (injected)' USING ERRCODE = 'deadlock_detected'; END IF;
        RETURN NEW;
      END $$`);
    await db.query(
      `CREATE TRIGGER deadlock_once BEFORE UPDATE ON durable.runs FOR EACH ROW WHEN (NEW.status = 'cancelled') EXECUTE FUNCTION durable.deadlock_once()`,
    );

    await t.client.cancel(run.runId, 'no longer needed');

    expect((await t.client.getRun(run.runId)).status).toBe('cancelled');
    expect(await db.count('history', `run_id = $1 AND event = 'cancelled'`, [run.runId])).toBe(1);
    expect((await db.query(`SELECT last_value FROM durable.faults`))[0].last_value).toBe('2');
  });
});
