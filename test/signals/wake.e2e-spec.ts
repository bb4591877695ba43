import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DurableWorkflow, RunClosedError, Workflow, WorkflowContext } from 'nestjs-durable';
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

/** The same wait as a select: the signal, or an hour's timer. */
@Workflow('select-go')
class SelectGo implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('before', () => true);
    const won = await ctx.select('go-or-hour', { go: ctx.signal<string>('go'), hour: ctx.timer('1h') });
    return won.key === 'go' ? won.value : 'timed out';
  }
}

/** Waits for a signal, a message and another signal, in turn: three parks, three wakes. */
@Workflow('in-turn')
class InTurn implements DurableWorkflow<null, unknown[]> {
  async run(_: null, ctx: WorkflowContext) {
    const a = await ctx.waitForSignal<string>('a');
    // One message, taken as the contract says a channel is consumed: a bare receive then ack would wait
    // again on a re-run (acked messages are gone from receive), and a re-run comes whenever the wait
    // for 'b' is woken in-process.
    const m = await ctx.consume<string>('m', () => undefined, { until: () => true });
    const b = await ctx.waitForSignal<string>('b');
    return [a, m.payload, b];
  }
}

/** A step with a counted effect, then a wait. */
const effects = new Map<string, number>();
@Workflow('effect-then-go')
class EffectThenGo implements DurableWorkflow<null, unknown[]> {
  async run(_: null, ctx: WorkflowContext) {
    const n = await ctx.step('effect', () => {
      effects.set(ctx.runId, (effects.get(ctx.runId) ?? 0) + 1);
      return effects.get(ctx.runId)!;
    });
    return [n, await ctx.waitForSignal<string>('go')];
  }
}

const providers = [AwaitGo, SelectGo, InTurn, EffectThenGo];

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

  it('a delivery from an instance with a free slot claims the run parked on it and executes it there at once', async () => {
    const b = await boot({ sweeper: false });
    const a = await boot({ sweeper: false });
    const handle = await b.client.start(AwaitGo, null);
    await eventually(async () => (await b.client.getRun(handle.runId)).status === 'waiting', 'B to park the run');
    await a.signals.signal(handle.runId, 'go', 'claimed by A');
    expect(a.get(DurableWorker).isExecuting(handle.runId)).toBe(true); // no NOTIFY or claim pass between
    expect(await a.client.handle(handle.runId).result({ timeout: '5s' })).toBe('claimed by A');
    const history = await db.query(
      `SELECT event, actor FROM durable.history WHERE run_id = $1 AND id > (SELECT max(id) FROM durable.history WHERE run_id = $1 AND event = 'parked') ORDER BY id`,
      [handle.runId],
    );
    const byA = a.get(DurableWorker).id;
    expect(history).toEqual([
      { event: 'signal-delivered', actor: 'api' },
      { event: 'claimed', actor: byA },
      { event: 'completed', actor: byA },
    ]);
  });

  it('a claiming delivery that waited for the run row while the run was checkpointed and parked reads the journal afresh', async () => {
    const starter = await boot({ sweeper: false, worker: { enabled: false } });
    const { runId } = await starter.client.start(EffectThenGo, null);
    const t = `"${schema}"`;
    // This connection plays a worker that holds the run; it checkpoints the step and parks while the delivery waits for the row.
    const worker = new Client({ connectionString: databaseUrl() });
    await worker.connect();
    try {
      await worker.query(
        `UPDATE ${t}.runs SET status = 'running', lease_owner = 'w1', lease_token = lease_token + 1, wake_at = now() + interval '1 minute' WHERE id = $1`,
        [runId],
      );
      const a = await boot({ sweeper: false });
      await worker.query('BEGIN');
      await worker.query(`SELECT 1 FROM ${t}.runs WHERE id = $1 FOR UPDATE`, [runId]);
      const delivered = a.signals.signal(runId, 'go', 'late');
      await eventually(
        async () =>
          (
            await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [
              `%FROM ${t}."runs"%workflow = ANY%`,
            ])
          ).length > 0,
        'the delivery to wait for the run row',
      );
      await worker.query(
        `INSERT INTO ${t}.steps (run_id, run_day, key, kind, outcome, result) SELECT $1, run_day, 'effect', 'step', 'ok', '41' FROM ${t}.runs WHERE id = $1`,
        [runId],
      );
      await worker.query(
        `UPDATE ${t}.runs SET status = 'waiting', wait = '{"kind":"signal","name":"go"}', wait_kind = 'signal', wait_name = 'go', wake_at = NULL, lease_owner = NULL WHERE id = $1`,
        [runId],
      );
      await worker.query('COMMIT');
      expect((await delivered).accepted).toBe(true);
      expect(await a.client.handle(runId).result({ timeout: '5s' })).toEqual([41, 'late']);
      expect(effects.get(runId)).toBeUndefined();
      const [claimed] = await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'claimed'`, [runId]);
      expect(claimed.actor).toBe(a.get(DurableWorker).id);
    } finally {
      await worker.end();
    }
  });

  it('a slot a delivery held for a claim it did not make goes to the work a claim pass had to leave', async () => {
    const a = await boot({ sweeper: false, worker: { concurrency: 1 } });
    const starter = await boot({ sweeper: false, worker: { enabled: false } });
    const parked = await a.client.start(AwaitGo, null);
    await eventually(async () => (await a.client.getRun(parked.runId)).status === 'waiting', 'the run to park');
    const t = `"${schema}"`;
    const locker = new Client({ connectionString: databaseUrl() });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM ${t}.runs WHERE id = $1 FOR UPDATE`, [parked.runId]);
      // The delivery holds A's only slot while it waits for the row; it will claim nothing (the run waits for 'go').
      const delivered = a.signals.signal(parked.runId, 'other', 1);
      await eventually(
        async () =>
          (
            await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [
              `%FROM ${t}."runs"%workflow = ANY%`,
            ])
          ).length > 0,
        'the delivery to wait for the run row',
      );
      const due = await starter.client.start(AwaitGo, null); // its NOTIFY finds A without a free slot
      await new Promise((r) => setTimeout(r, 300));
      expect((await a.client.getRun(due.runId)).status).toBe('pending');
      await locker.query('COMMIT');
      expect((await delivered).accepted).toBe(true);
      await eventually(
        async () => (await a.client.getRun(due.runId)).status === 'waiting',
        'A to take the due run once the slot is free',
        3_000,
      );
    } finally {
      await locker.end();
    }
  });

  it('signals and messages racing each other from two claiming instances: every run takes each once and none is left waiting', async () => {
    const a = await boot({ sweeper: false, worker: { concurrency: 20 } });
    const b = await boot({ sweeper: false, worker: { concurrency: 20 } });
    const handles = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).client.start(InTurn, null)));
    await Promise.all(
      handles.map(async (h, i) => {
        const [x, y] = i % 2 ? [a, b] : [b, a];
        await new Promise((r) => setTimeout(r, (i * 7) % 30));
        // 'a' goes out twice: the copy that comes second may find the run already completed, refused as closed.
        const deliverA = (from: DurableTestApp) =>
          from.signals.signal(h.runId, 'a', 'A').catch((error) => expect(error).toBeInstanceOf(RunClosedError));
        await Promise.all([y.signals.signal(h.runId, 'b', 'B'), x.signals.send(h.runId, 'm', 'k', 'M'), deliverA(x), deliverA(y)]);
      }),
    );
    const outputs = await Promise.all(handles.map((h) => h.result({ timeout: '30s' })));
    expect(outputs).toEqual(handles.map(() => ['A', 'M', 'B']));
  });

  /** Signals delivered while their runs race to the park; the sweeper is off, so a lost wakeup hangs. */
  const lostWakeupRace = async (senderWorker: object, workflow: typeof AwaitGo | typeof SelectGo = AwaitGo) => {
    const worker = await boot({ sweeper: false, worker: { concurrency: 20 } });
    const sender = await boot({ sweeper: false, worker: senderWorker });
    const handles = await Promise.all(Array.from({ length: 200 }, () => sender.client.start(workflow, null)));
    await Promise.all(
      handles.map(async (h, i) => {
        await new Promise((r) => setTimeout(r, (i * 7) % 40));
        await sender.signals.signal(h.runId, 'go', h.runId);
      }),
    );
    const outputs = await Promise.all(handles.map((h) => h.result({ timeout: '30s' })));
    expect(outputs).toEqual(handles.map((h) => h.runId));
    const stuck = await db.query(
      `SELECT r.id FROM durable.runs r JOIN durable.signals s ON s.run_id = r.id AND s.name = 'go' WHERE r.status = 'waiting'`,
    );
    expect(stuck).toEqual([]);
    void worker;
  };

  it('the lost-wakeup race: 200 signals racing their runs to the park leave no run waiting on a delivered signal', () =>
    lostWakeupRace({ enabled: false }));

  it('the same race with deliveries that claim the runs they wake: none is left waiting on a delivered signal', () =>
    lostWakeupRace({ concurrency: 20 }));

  it('the same race with runs parking on a select whose arm is the signal: none is left waiting on it', () =>
    lostWakeupRace({ enabled: false }, SelectGo));

  it('after the LISTEN connection is killed it reconnects, and cross-instance wakes work again without the sweeper', async () => {
    const b = await boot({ sweeper: false });
    const a = await boot({ sweeper: false, worker: { enabled: false } });
    const killed = await db.query(
      // This file's own listeners only: files running side by side keep theirs.
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
      [`nestjs-durable:listen:${schema}`],
    );
    expect(killed.length).toBeGreaterThanOrEqual(1);
    const listener = b.get(WakeListener);
    await eventually(async () => listener.reconnects >= 1 && listener.listening, 'the listener to reconnect');
    const handle = await b.client.start(AwaitGo, null);
    await eventually(async () => (await b.client.getRun(handle.runId)).status === 'waiting', 'B to park the run');
    await a.signals.signal(handle.runId, 'go', 'after reconnect');
    expect(await a.client.handle(handle.runId).result({ timeout: '3s' })).toBe('after reconnect');
  });

  it("signal and start join the caller's transaction: a rollback leaves no trace and wakes nothing; a commit wakes the run", async () => {
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
