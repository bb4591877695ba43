import { Client } from 'pg';
import { retryTransient } from 'nestjs-durable/persistence/transient-retry';
import { databaseUrl, Db, uniqueSchema } from '../setup/durable-app';

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
