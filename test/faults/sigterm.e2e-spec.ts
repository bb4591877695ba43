import { Ledger, RetryLater, SlowStep } from '../fixtures/order-flow.workflows';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { exited, kill, ready, spawnTs } from '../setup/processes';

jest.setTimeout(60_000);

describe('SIGTERM with runs in flight', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let client: DurableTestApp;

  beforeAll(async () => {
    client = await startApp({
      schema,
      providers: [Ledger, SlowStep, RetryLater],
      options: { connection: { type: 'postgres', url: databaseUrl(), schema }, worker: { enabled: false } },
    });
    await db.query(`CREATE TABLE ${Ledger.table(schema)} (id serial PRIMARY KEY, run_id text NOT NULL, effect text NOT NULL)`);
  });
  afterAll(async () => {
    await client.close();
    await db.dropSchema();
  });

  it('short runs finish within the grace period, long ones are released at once; none waits out its 60 s lease', async () => {
    const worker = spawnTs('test/fixtures/worker.process.ts', {
      DATABASE_URL: databaseUrl(),
      SCHEMA: schema,
      LEASE_MS: '60000',
      SHUTDOWN_GRACE_MS: '1500',
    });
    await ready(worker);
    const short = await Promise.all(Array.from({ length: 3 }, () => client.client.start(SlowStep, { ms: 300 })));
    const long = await Promise.all(Array.from({ length: 2 }, () => client.client.start(SlowStep, { ms: 20_000 })));
    await eventually(async () => (await db.count('runs', `status = 'running'`)) === 5, 'all five runs to be in flight');

    const terminated = Date.now();
    const exit = exited(worker);
    worker.kill('SIGTERM');
    await exit;
    expect(Date.now() - terminated).toBeLessThan(5_000);

    for (const run of short) expect((await client.client.getRun(run.runId)).status).toBe('completed');
    for (const run of long) {
      const [row] = await db.query(`SELECT status, wake_at <= now() AS due, lease_owner FROM durable.runs WHERE id = $1`, [run.runId]);
      expect(row).toEqual({ status: 'pending', due: true, lease_owner: null });
    }
    // Another instance takes the released runs at once, not a lease later.
    const successor = spawnTs('test/fixtures/worker.process.ts', { DATABASE_URL: databaseUrl(), SCHEMA: schema, LEASE_MS: '60000' });
    try {
      await ready(successor);
      await eventually(async () => (await db.count('runs', `status = 'running'`)) === 2, 'the successor to take the released runs', 5_000);
    } finally {
      successor.kill('SIGKILL');
    }
  });

  it('a process that closes its application exits by itself once its runs are done, not when the grace period would end', async () => {
    const worker = spawnTs('test/fixtures/worker.process.ts', { DATABASE_URL: databaseUrl(), SCHEMA: schema, SHUTDOWN_GRACE_MS: '600000' });
    try {
      await ready(worker);
      const runs = await Promise.all(Array.from({ length: 3 }, () => client.client.start(SlowStep, { ms: 4_000 })));
      const inFlight = async () => (await Promise.all(runs.map((r) => client.client.getRun(r.runId)))).every((r) => r.status === 'running');
      await eventually(inFlight, 'the three runs to be in flight');
      const exit = exited(worker);
      worker.kill('SIGUSR2');
      // A timer left from the 10-minute grace would hold the process for ten minutes.
      expect(await exit).toBe(0);
      for (const run of runs) expect((await client.client.getRun(run.runId)).status).toBe('completed');
    } finally {
      await kill(worker);
    }
  });

  it("a step's retry backoff in-process ends with the lease at shutdown: the process exits, the run released", async () => {
    const worker = spawnTs('test/fixtures/worker.process.ts', { DATABASE_URL: databaseUrl(), SCHEMA: schema, SHUTDOWN_GRACE_MS: '200' });
    try {
      await ready(worker);
      const run = await client.client.start(RetryLater, null);
      await eventually(async () => (await db.count('ledger', `run_id = $1`, [run.runId])) === 1, 'the first try to have failed');
      const exit = exited(worker);
      worker.kill('SIGUSR2');
      // The backoff is 5 minutes (10 capped at retry.maxDelay's default): its timer would hold the process that long.
      expect(await exit).toBe(0);
      const [row] = await db.query(`SELECT status, lease_owner FROM durable.runs WHERE id = $1`, [run.runId]);
      expect(row).toEqual({ status: 'pending', lease_owner: null });
      expect(await db.count('ledger', `run_id = $1`, [run.runId])).toBe(1);
    } finally {
      await kill(worker);
    }
  });
});
