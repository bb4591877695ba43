import { Client } from 'pg';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Workflow('listens')
class Listens implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.receive<string>('events');
  }
}

describe('a session cut in the middle of a delivery', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, providers: [Listens] });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('fails that send with the database\'s error and leaves the process and its pool working (found by the chaos soak)', async () => {
    const run = await t.client.start(Listens, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to wait');
    // Another session holds the run's row lock, so send() waits inside its own transaction...
    const blocker = new Client(databaseUrl());
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [run.runId]);
    const sending = t.signals.send(run.runId, 'events', 'k1', 'hello').then(() => 'sent', (error: Error) => error.message);
    const [waiting] = await eventually(async () => {
      const rows = await db.query(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%' AND pid <> pg_backend_pid() AND datname = current_database()`);
      return rows.length > 0 && rows;
    }, 'send to wait for the lock');
    // ...and its session is cut there.
    await db.query('SELECT pg_terminate_backend($1)', [waiting.pid]);
    expect(await sending).toMatch(/terminat|Connection/);
    await blocker.query('ROLLBACK');
    await blocker.end();
    // The process lives on and the pool serves the next delivery.
    expect(await t.signals.send(run.runId, 'events', 'k2', 'again')).toMatchObject({ accepted: true });
    expect(await run.result({ timeout: '5s' })).toMatchObject({ key: 'k2', payload: 'again' });
  });
});
