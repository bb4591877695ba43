import { Client } from 'pg';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Workflow('listens')
class Listens implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.receive<string>('events');
  }
}

/** A step whose effect is counted and which returns when the test opens its gate. */
const effects = new Map<string, number>();
const gates = new Map<string, () => void>();
@Workflow('gated-effect')
class GatedEffect implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('effect', async () => {
      effects.set(ctx.runId, (effects.get(ctx.runId) ?? 0) + 1);
      await new Promise<void>((open) => gates.set(ctx.runId, open));
      return 'done';
    });
  }
}

/** Holds a run's row lock from another session until released; finds the library session waiting on it. */
async function lockRun(schema: string, db: Db, runId: string, waiting: string) {
  const blocker = new Client(databaseUrl());
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [runId]);
  return {
    waiter: () =>
      eventually(async () => {
        const rows = await db.query(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND pid <> pg_backend_pid() AND datname = current_database()`, [waiting]);
        return rows.length > 0 && (rows[0].pid as number);
      }, 'a library session to wait for the run row'),
    release: async () => {
      await blocker.query('ROLLBACK');
      await blocker.end();
    },
  };
}

describe('a session cut in the middle of a delivery or a checkpoint', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, providers: [Listens, GatedEffect] });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('fails that send with the database\'s error and leaves the process and its pool working (found by the chaos soak)', async () => {
    const run = await t.client.start(Listens, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to wait');
    // Another session holds the run's row lock, so send() waits inside its own transaction...
    const lock = await lockRun(schema, db, run.runId, '%FOR UPDATE%');
    const sending = t.signals.send(run.runId, 'events', 'k1', 'hello').then(() => 'sent', (error: Error) => error.message);
    // ...and its session is cut there.
    await db.query('SELECT pg_terminate_backend($1)', [await lock.waiter()]);
    expect(await sending).toMatch(/terminat|Connection/);
    await lock.release();
    // The process lives on and the pool serves the next delivery.
    expect(await t.signals.send(run.runId, 'events', 'k2', 'again')).toMatchObject({ accepted: true });
    expect(await run.result({ timeout: '5s' })).toMatchObject({ key: 'k2', payload: 'again' });
  });

  it('a checkpoint write whose session is cut is written again on another connection: the step does not run twice', async () => {
    const run = await t.client.start(GatedEffect, null);
    await eventually(async () => gates.has(run.runId), 'the step to run');
    const lock = await lockRun(schema, db, run.runId, '%FOR SHARE%');
    gates.get(run.runId)!(); // the step returns; its checkpoint waits for the row lock...
    await db.query('SELECT pg_terminate_backend($1)', [await lock.waiter()]); // ...and its session is cut there
    await lock.release();
    expect(await run.result({ timeout: '10s' })).toBe('done');
    expect(effects.get(run.runId)).toBe(1);
    expect((await t.client.getRun(run.runId)).attempt).toBe(1);
  });
});
