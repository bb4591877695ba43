import { Inject, Injectable } from '@nestjs/common';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { WakeBus } from 'nestjs-durable/runtime/wake-bus';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { StatementGate } from '../setup/statement-gate';

/** Shared by every application of this file (they run in one process): who executed what, and when. */
const observed = {
  active: new Map<string, number>(),
  maxActive: new Map<string, number>(),
  executedBy: new Map<string, string[]>(),
  concurrent: 0,
  maxConcurrent: 0,
  gates: new Map<string, () => void>(),
};

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

@Injectable()
class Probe {
  constructor(@Inject('INSTANCE') readonly instance: string) {}
  async enter(runId: string, ms: number): Promise<string> {
    const active = (observed.active.get(runId) ?? 0) + 1;
    observed.active.set(runId, active);
    observed.maxActive.set(runId, Math.max(active, observed.maxActive.get(runId) ?? 0));
    observed.executedBy.set(runId, [...(observed.executedBy.get(runId) ?? []), this.instance]);
    observed.concurrent++;
    observed.maxConcurrent = Math.max(observed.maxConcurrent, observed.concurrent);
    try {
      await delay(ms);
    } finally {
      observed.concurrent--;
      observed.active.set(runId, observed.active.get(runId)! - 1);
    }
    return this.instance;
  }
}

@Workflow('shared-work')
class SharedWork implements DurableWorkflow<{ ms: number }, string> {
  constructor(private readonly probe: Probe) {}
  async run(input: { ms: number }, ctx: WorkflowContext) {
    return ctx.step('work', () => this.probe.enter(ctx.runId, input.ms));
  }
}

/** The first execution of its step blocks on a gate the test opens; later executions go through. */
@Workflow('gated')
class Gated implements DurableWorkflow<null, string> {
  constructor(private readonly probe: Probe) {}
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('side-effect', async () => {
      const first = !observed.executedBy.has(ctx.runId);
      observed.executedBy.set(ctx.runId, [...(observed.executedBy.get(ctx.runId) ?? []), this.probe.instance]);
      if (first) await new Promise<void>((open) => observed.gates.set(ctx.runId, open));
      return this.probe.instance;
    });
  }
}

/** Waits for `go` with a timeout short enough to be waited in-process under the inlineWaitMs its test gives. */
@Workflow('inline-wait')
class InlineWait implements DurableWorkflow<null, boolean> {
  async run(_: null, ctx: WorkflowContext) {
    return (await ctx.waitForSignal('go', { timeout: '15s' })).received;
  }
}

const app = (schema: string, instance: string, options = {}) =>
  startApp({ schema, providers: [{ provide: 'INSTANCE', useValue: instance }, Probe, SharedWork, Gated, InlineWait], options });

describe('workers: claims, leases, fencing and shutdown', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  const apps: DurableTestApp[] = [];
  const boot = async (instance: string, options = {}) => {
    const started = await app(schema, instance, options);
    apps.push(started);
    return started;
  };

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  afterAll(() => db.dropSchema());

  it('two instances on one database share the runs and never execute one run twice at once', async () => {
    const [a, b] = [await boot('A', { worker: { concurrency: 8 } }), await boot('B', { worker: { concurrency: 8 } })];
    const starter = await boot('starter', { worker: { enabled: false } });
    const handles = await Promise.all(Array.from({ length: 120 }, () => starter.client.start(SharedWork, { ms: 5 })));
    const outputs = await Promise.all(handles.map((h) => h.result({ timeout: '30s' })));
    expect(new Set(outputs)).toEqual(new Set(['A', 'B']));
    for (const h of handles) {
      expect(observed.maxActive.get(h.runId)).toBe(1);
      expect(observed.executedBy.get(h.runId)).toHaveLength(1);
    }
    const claims = await db.query(
      `SELECT run_id, count(*)::int AS n FROM durable.history WHERE event = 'claimed' GROUP BY run_id HAVING count(*) > 1`,
    );
    expect(claims).toEqual([]);
    void a;
    void b;
  });

  it("a run whose lease lapsed is taken over, and the old worker's late checkpoint and end are refused by the fencing token", async () => {
    // A has no sweeper, so only B can take the lapsed run (else A may reclaim its own, which is also correct).
    const a = await boot('A', { leaseMs: 60_000, sweeper: false });
    const handle = await a.client.start(Gated, null);
    await eventually(async () => observed.gates.has(handle.runId), 'A to be inside the step');
    const b = await boot('B', { sweeper: { intervalMs: 50 } });
    // A stops renewing (as a paused or partitioned process would): its lease lapses.
    await db.query(`UPDATE durable.runs SET wake_at = now() - interval '1 second' WHERE id = $1`, [handle.runId]);
    expect(await b.client.handle(handle.runId).result({ timeout: '10s' })).toBe('B');
    observed.gates.get(handle.runId)!(); // A's step returns now, late
    await delay(200);
    const [step] = await db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'side-effect'`, [handle.runId]);
    expect(JSON.parse(step.result)).toBe('B');
    const events = (await db.query(`SELECT event, actor FROM durable.history WHERE run_id = $1 ORDER BY id`, [handle.runId])).map(
      (r) => r.event,
    );
    expect(events).toEqual(['started', 'lease-taken-over', 'completed']);
    expect((await a.client.getRun(handle.runId)).output).toBe('B');
    expect(observed.executedBy.get(handle.runId)).toEqual(['A', 'B']);
    // A's refused execution stopped: closing A does not wait out its shutdown grace for it.
    const closing = Date.now();
    await apps.splice(apps.indexOf(a), 1)[0].close();
    expect(Date.now() - closing).toBeLessThan(1_000);
  });

  it('the concurrency limit bounds how many runs one instance executes at once', async () => {
    observed.maxConcurrent = 0;
    const a = await boot('A', { worker: { concurrency: 3 } });
    const handles = await Promise.all(Array.from({ length: 12 }, () => a.client.start(SharedWork, { ms: 60 })));
    await Promise.all(handles.map((h) => h.result({ timeout: '30s' })));
    expect(observed.maxConcurrent).toBe(3);
  });

  it('shutdown lets short executions finish and releases longer ones at once for another instance', async () => {
    const a = await boot('A', { shutdownGraceMs: 300, leaseMs: 60_000 });
    const short = await a.client.start(SharedWork, { ms: 100 });
    const long = await a.client.start(Gated, null);
    await eventually(async () => observed.gates.has(long.runId), 'the long run to be inside its step');
    const closing = Date.now();
    await apps.splice(apps.indexOf(a), 1)[0].close();
    expect(Date.now() - closing).toBeLessThan(2_000);
    const [shortRun] = await db.query(`SELECT status FROM durable.runs WHERE id = $1`, [short.runId]);
    expect(shortRun.status).toBe('completed');
    const [longRun] = await db.query(`SELECT status, wake_at <= now() AS due FROM durable.runs WHERE id = $1`, [long.runId]);
    expect(longRun).toEqual({ status: 'pending', due: true });
    const b = await boot('B');
    expect(await b.client.handle(long.runId).result({ timeout: '10s' })).toBe('B');
  });

  it('shutdown ends a wait in-process at once: no timer of the released run keeps the closed application alive', async () => {
    const a = await boot('A', { inlineWaitMs: 20_000, shutdownGraceMs: 100, leaseMs: 60_000 });
    // The bus's waits as the runs' executions take them, to see whether the released run's is over.
    const waits: Promise<void>[] = [];
    const bus = a.get(WakeBus);
    const watch = bus.watch.bind(bus);
    jest.spyOn(bus, 'watch').mockImplementation((runId) => {
      const wakes = watch(runId);
      return {
        ...wakes,
        next: (ms, since) => {
          const wait = wakes.next(ms, since);
          waits.push(wait);
          return wait;
        },
      };
    });
    const waiting = await a.client.start(InlineWait, null);
    await eventually(async () => waits.length === 1, 'the run to wait in-process');
    let over = false;
    void waits[0].then(() => (over = true));
    await apps.splice(apps.indexOf(a), 1)[0].close();
    expect(over).toBe(true);
    const [run] = await db.query(`SELECT status FROM durable.runs WHERE id = $1`, [waiting.runId]);
    expect(run.status).toBe('pending');
  });
});

describe('shutdown while a start claims a run for this instance', () => {
  /**
   * An instance whose start is held in its insert (which claims the run for it): `during` shuts it down
   * and lets the insert go, in its own order; `check` reads the run after. The app is closed at the end
   * unless `during` closed it.
   */
  const heldStart = async (
    graceMs: number,
    during: (app: { worker: DurableWorker; close: () => Promise<void>; db: Db }, release: () => Promise<void>) => Promise<void>,
    check: (runId: string, row: () => Promise<unknown>) => Promise<void>,
  ) => {
    const own = uniqueSchema();
    const db = new Db(own);
    const gate = await StatementGate.open(db);
    const a = await startApp({
      schema: own,
      providers: [{ provide: 'INSTANCE', useValue: 'A' }, Probe, SharedWork, Gated, InlineWait],
      options: { connection: gate.url, shutdownGraceMs: graceMs, leaseMs: 60_000 },
    });
    let closing: Promise<void> | undefined;
    const close = () => (closing ??= a.close());
    try {
      await gate.install('runs', ['wake_at, lease_owner, lease_token']);
      await gate.hold();
      const starting = a.client.start(Gated, null);
      await gate.held('the start held in its insert');
      await during({ worker: a.get(DurableWorker), close, db }, () => gate.release());
      const { runId } = await starting;
      await check(runId, () => db.query(`SELECT status, lease_owner FROM durable.runs WHERE id = $1`, [runId]));
    } finally {
      await gate.release();
      await close();
      await gate.uninstall('runs');
      await gate.close();
    }
  };
  const released = [{ status: 'pending', lease_owner: null }];

  it('the start in flight as shutdown begins: its run executes within the grace, then is released, not left leased to the closed instance', async () => {
    await heldStart(
      2_000, // a grace the run surely reaches its step in
      async ({ worker }, release) => {
        const shutdown = worker.beforeApplicationShutdown(); // it stops accepting at once
        await release();
        await shutdown;
      },
      async (runId, row) => {
        // It executed (its step is still inside, past the grace) and was released for another instance.
        expect(observed.executedBy.get(runId)).toEqual(['A']);
        expect(await row()).toEqual(released);
        observed.gates.get(runId)?.();
      },
    );
  });

  it('a start that lands only after shutdown ended (its insert held past the grace) is released as it lands, before the pool closes; not executed', async () => {
    await heldStart(
      200,
      async ({ close, db }, release) => {
        const closed = close();
        await eventually(
          async () => (await db.query(`SELECT 1 FROM durable.instances WHERE NOT detail ? 'workflows'`)).length > 0,
          'the shutdown hooks of the worker done (its workflows withdrawn)',
        );
        await release();
        await closed;
      },
      async (runId, row) => {
        expect(await row()).toEqual(released);
        expect(observed.executedBy.get(runId)).toBeUndefined();
      },
    );
  });
});
