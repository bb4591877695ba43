import { DataSource } from 'typeorm';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { WakeListener } from 'nestjs-durable/worker/wake-listener';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Workflow('await-go')
class AwaitGo implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('before', () => true);
    return ctx.waitForSignal<string>('go');
  }
}

const providers = [AwaitGo];

describe('waking: in-process, across instances, and the lost-wakeup race', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  const apps: DurableTestApp[] = [];
  const boot = async (options = {}) => {
    const app = await startApp({ schema, providers, options });
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  afterAll(() => db.dropSchema());

  it('a signal delivered through instance A wakes a run parked by instance B well before any sweep (NOTIFY)', async () => {
    const b = await boot({ sweeper: false });
    const a = await boot({ sweeper: false, worker: { enabled: false } });
    const handle = await b.client.start(AwaitGo, null);
    await eventually(async () => (await b.client.getRun(handle.runId)).status === 'waiting', 'B to park the run');
    const sent = Date.now();
    await a.signals.signal(handle.runId, 'go', 'from A');
    expect(await a.client.handle(handle.runId).result({ timeout: '5s' })).toBe('from A');
    expect(Date.now() - sent).toBeLessThan(1_000);
    const [completed] = await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'completed'`, [handle.runId]);
    expect(completed.actor).toBe(b.get(DurableWorker).id);
  });

  it('the lost-wakeup race: 200 signals racing their runs to the park leave no run waiting on a delivered signal', async () => {
    const worker = await boot({ sweeper: false, worker: { concurrency: 20 } });
    const sender = await boot({ sweeper: false, worker: { enabled: false } });
    const handles = await Promise.all(Array.from({ length: 200 }, () => sender.client.start(AwaitGo, null)));
    await Promise.all(
      handles.map(async (h, i) => {
        await new Promise((r) => setTimeout(r, (i * 7) % 40));
        await sender.signals.signal(h.runId, 'go', h.runId);
      }),
    );
    const outputs = await Promise.all(handles.map((h) => h.result({ timeout: '30s' })));
    expect(outputs).toEqual(handles.map((h) => h.runId));
    const stuck = await db.query(`SELECT r.id FROM durable.runs r JOIN durable.signals s ON s.run_id = r.id WHERE r.status = 'waiting'`);
    expect(stuck).toEqual([]);
    void worker;
  });

  it('after the LISTEN connection is killed it reconnects, and cross-instance wakes work again without the sweeper', async () => {
    const b = await boot({ sweeper: false });
    const a = await boot({ sweeper: false, worker: { enabled: false } });
    const killed = await db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'nestjs-durable:listen' AND datname = current_database()`);
    expect(killed.length).toBeGreaterThanOrEqual(1);
    const listener = b.get(WakeListener);
    await eventually(async () => listener.reconnects >= 1 && listener.listening, 'the listener to reconnect');
    const handle = await b.client.start(AwaitGo, null);
    await eventually(async () => (await b.client.getRun(handle.runId)).status === 'waiting', 'B to park the run');
    await a.signals.signal(handle.runId, 'go', 'after reconnect');
    expect(await a.client.handle(handle.runId).result({ timeout: '3s' })).toBe('after reconnect');
  });

  it('signal and start join the caller\'s transaction: a rollback leaves no trace and wakes nothing; a commit wakes the run', async () => {
    const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl() }).initialize();
    const app = await boot({ connection: dataSource });
    try {
      const handle = await app.client.start(AwaitGo, null);
      await eventually(async () => (await app.client.getRun(handle.runId)).status === 'waiting', 'the run to park');
      await expect(
        dataSource.transaction(async (manager) => {
          await app.signals.signal(handle.runId, 'go', 'rolled back', { manager });
          await app.client.start(AwaitGo, null, { runId: 'never-started', manager });
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      await new Promise((r) => setTimeout(r, 300));
      expect(await db.count('signals', 'run_id = $1', [handle.runId])).toBe(0);
      expect(await db.count('runs', 'id = $1', ['never-started'])).toBe(0);
      expect((await app.client.getRun(handle.runId)).status).toBe('waiting');

      await dataSource.transaction(async (manager) => {
        await app.signals.signal(handle.runId, 'go', 'committed', { manager });
        await app.client.start(AwaitGo, null, { runId: 'started-in-tx', manager });
        await app.signals.signal('started-in-tx', 'go', 'buffered before it ran', { manager });
      });
      expect(await handle.result({ timeout: '5s' })).toBe('committed');
      expect(await app.client.handle('started-in-tx').result({ timeout: '5s' })).toBe('buffered before it ran');
    } finally {
      await apps.splice(apps.indexOf(app), 1)[0].close();
      await dataSource.destroy();
    }
  });
});
