import { ChildProcess } from 'node:child_process';
import { FulfillOrder, Ledger, SelectThenSlow, ShipOrder } from '../fixtures/order-flow.workflows';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { kill, ready, spawnTs } from '../setup/processes';

jest.setTimeout(90_000);

describe('crash recovery: the seed\'s "putting it together" flow survives SIGKILL twice', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let client: DurableTestApp;
  const workers: ChildProcess[] = [];
  const worker = async () => {
    const child = spawnTs('test/fixtures/worker.process.ts', { DATABASE_URL: databaseUrl(), SCHEMA: schema });
    workers.push(child);
    await ready(child);
    return child;
  };

  beforeAll(async () => {
    // A client-only application: it starts runs and delivers signals, and executes nothing.
    client = await startApp({
      schema,
      providers: [Ledger, FulfillOrder, ShipOrder, SelectThenSlow],
      options: { connection: { type: 'postgres', url: databaseUrl(), schema }, worker: { enabled: false } },
    });
    await db.query(`CREATE TABLE ${Ledger.table(schema)} (id serial PRIMARY KEY, run_id text NOT NULL, effect text NOT NULL)`);
  });
  afterAll(async () => {
    await Promise.all(workers.map(kill));
    await client.close();
    await db.dropSchema();
  });

  it('charge → ship (child) → sleep → signal with deadline → close: one charge, one child, one close', async () => {
    const first = await worker();
    const handle = await client.client.start(FulfillOrder, { orderId: 'o-1' });

    // Crash 1: right after the child spawn is journaled.
    await eventually(
      async () => (await db.count('steps', `run_id = $1 AND key = 'child:ship'`, [handle.runId])) === 1,
      'the child spawn',
      20_000,
    );
    await kill(first);

    // Crash 2: after the sleep, while the run waits for the delivery confirmation.
    const second = await worker();
    await eventually(
      async () => {
        const run = await client.client.getRun(handle.runId);
        return run.status === 'waiting' && run.waiting?.kind === 'signal';
      },
      'the run to get past the sleep and wait for the signal',
      30_000,
    );
    await kill(second);

    // Delivered while no worker is alive (buffered), so a slow boot of the next one cannot outlast the deadline.
    await client.signals.signal(handle.runId, 'delivered-confirmation', 'all good');
    await worker();
    const output = await client.client.handle(handle.runId).result({ timeout: '30s' });
    expect(output).toEqual({ receipt: `receipt-${handle.runId}`, shipped: 'shipped o-1', feedback: 'all good' });

    const effects = await db.query(`SELECT effect, count(*)::int AS n FROM ${Ledger.table(schema)} GROUP BY effect ORDER BY effect`);
    const count = (effect: string) => effects.find((e) => e.effect === effect)?.n ?? 0;
    expect([count('charge'), count('close')]).toEqual([1, 1]);
    // The child ran in the killed process too: its step may run again only if the kill fell between
    // its effect and its checkpoint (the one crash window), never more often than the kills.
    expect(count('ship')).toBeGreaterThanOrEqual(1);
    expect(count('ship')).toBeLessThanOrEqual(2);
    expect(await db.count('runs', 'parent_id = $1', [handle.runId])).toBe(1);
    const sleeps = await db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'sleep:delivery-window'`, [handle.runId]);
    expect(sleeps).toHaveLength(1);
  });

  it("a select's winner survives SIGKILL: the re-run returns it though another arm arrived while no worker was alive", async () => {
    await Promise.all(workers.map(kill)); // the previous test's last worker would otherwise take the run
    const first = await worker();
    const handle = await client.client.start(SelectThenSlow, null);
    await eventually(async () => (await client.client.getRun(handle.runId)).waiting?.kind === 'select', 'parked on the select', 20_000);
    await client.signals.signal(handle.runId, 'a', 'first');
    // Killed inside the step after the select: its winner is journaled, the step is not.
    await eventually(
      async () =>
        (await db.count('steps', `run_id = $1 AND key = 'select:decision'`, [handle.runId])) === 1 &&
        (await db.query(`SELECT 1 FROM ${Ledger.table(schema)} WHERE run_id = $1`, [handle.runId])).length === 1,
      'the slow step under way',
      20_000,
    );
    await kill(first);
    await client.signals.signal(handle.runId, 'b', 'arrived during the downtime');
    await db.query(`INSERT INTO ${Ledger.table(schema)} (run_id, effect) VALUES ($1, 'release')`, [handle.runId]);
    await worker();
    expect(await client.client.handle(handle.runId).result({ timeout: '30s' })).toEqual({ key: 'a', value: 'first' });
    expect(await db.count('steps', `run_id = $1 AND kind = 'select'`, [handle.runId])).toBe(1);
    // The kill fell inside the step (its effect written, its checkpoint not): it ran again, once.
    const slow = await db.query(`SELECT count(*)::int AS n FROM ${Ledger.table(schema)} WHERE run_id = $1 AND effect = 'slow'`, [
      handle.runId,
    ]);
    expect(slow[0].n).toBe(2);
  });
});
