import { Injectable, Logger } from '@nestjs/common';
import {
  defineSignal,
  DURABLE_DATA_SOURCE,
  DurableWorkflow,
  InvalidArgumentError,
  SignalService,
  Step,
  Workflow,
  WorkflowClient,
  WorkflowContext,
} from 'nestjs-durable';
import { Client, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { queueChannel, wakeChannel } from 'nestjs-durable/durable.constants';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { QueueRepository } from 'nestjs-durable/persistence/queue.repository';
import { resolveQueues } from 'nestjs-durable/queues/queue-config';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** Every execution of the work step, recorded in the database (never in process memory): entry and exit. */
const pool = new Pool({ connectionString: databaseUrl(), max: 8 });
let visitsTable = '';

@Injectable()
class Work {
  @Step()
  async visit(runId: string, partition: string | null, holdMs: number): Promise<void> {
    const [{ id }] = (
      await pool.query(`INSERT INTO ${visitsTable} (run_id, partition_key) VALUES ($1, $2) RETURNING id`, [runId, partition])
    ).rows as Array<{ id: number }>;
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    await pool.query(`UPDATE ${visitsTable} SET exited_at = clock_timestamp() WHERE id = $1`, [id]);
  }
}

@Workflow('limited', { queue: 'five' })
class Limited implements DurableWorkflow<{ partition?: string; holdMs: number }, void> {
  constructor(private readonly work: Work) {}
  async run(input: { partition?: string; holdMs: number }, ctx: WorkflowContext) {
    await this.work.visit(ctx.runId, input.partition ?? null, input.holdMs);
  }
}

const go = defineSignal<null>('go');
@Workflow('approval', { queue: 'single', signals: [go] })
class Approval implements DurableWorkflow<void, string> {
  async run(_: void, ctx: WorkflowContext) {
    await ctx.waitForSignal(go);
    return 'approved';
  }
}

/** A queued run that holds its slot, in its step, until the test releases it. */
@Workflow('held')
class Held implements DurableWorkflow<void, void> {
  static entered = new Set<string>();
  private static gate: Promise<void>;
  private static open: () => void;
  static {
    Held.close();
  }
  /** Executions entering the step from now on wait there until `release`. */
  static close(): void {
    Held.gate = new Promise<void>((resolve) => (Held.open = resolve));
  }
  static release(): void {
    Held.open();
  }
  async run(_: void, ctx: WorkflowContext) {
    await ctx.step('hold', async () => {
      Held.entered.add(ctx.runId);
      await Held.gate;
    });
  }
}

/** Fails for good: a failed queued run to retry. */
@Workflow('broken-approval', { queue: 'single', retry: { maxAttempts: 1 } })
class BrokenApproval implements DurableWorkflow<void, never> {
  async run(): Promise<never> {
    throw new Error('broken');
  }
}

@Workflow('quick')
class Quick implements DurableWorkflow<{ n?: number }, number> {
  async run(input: { n?: number }) {
    return input.n ?? 0;
  }
}

/** Ships each merchant's order as a child in the `tenants` queue, in the merchant's partition; express orders first. */
@Workflow('merchant-orders', { retry: { maxAttempts: 1 } })
class MerchantOrders implements DurableWorkflow<string[], void> {
  async run(merchants: string[], ctx: WorkflowContext) {
    const children = [];
    for (const [i, merchant] of merchants.entries()) {
      const priority = merchant === 'express' ? 10 : 100;
      children.push(
        await ctx.startChild(
          Limited,
          { partition: merchant, holdMs: 30 },
          { step: `ship-${i}`, queue: 'tenants', partitionKey: merchant, priority },
        ),
      );
    }
    await ctx.all(children);
  }
}

/** Places a child of an unqueued workflow in a partition, or misspells the option: refused, naming it. */
@Workflow('misplaced-child', { retry: { maxAttempts: 1 } })
class MisplacedChild implements DurableWorkflow<{ misspelt?: boolean } | undefined, void> {
  async run(input: { misspelt?: boolean } | undefined, ctx: WorkflowContext) {
    await ctx.startChild(
      Quick,
      {},
      input?.misspelt ? ({ step: 'quick', partitonKey: 'm1' } as never) : { step: 'quick', partitionKey: 'm1' },
    );
  }
}

/** Options a @Workflow does not have, or cannot mean: the boot fails naming them. */
@Workflow('misspelt', { timout: '1h' } as never)
class Misspelt implements DurableWorkflow<void, void> {
  async run() {}
}
@Workflow('no-time', { timeout: 0 })
class NoTime implements DurableWorkflow<void, void> {
  async run() {}
}
@Workflow('misspelt-retry', { retry: { maxAtempts: 1 } as never })
class MisspeltRetry implements DurableWorkflow<void, void> {
  async run() {}
}
/** ctx.step with a misspelt option: refused when called, naming it, and the step does not run. */
@Workflow('misspelt-inline-step', { retry: { maxAttempts: 1 } })
class MisspeltInlineStep implements DurableWorkflow<void, void> {
  async run(_: void, ctx: WorkflowContext) {
    await ctx.step('charge', () => 'charged', { retri: { maxAttempts: 3 } } as never);
  }
}
@Injectable()
class MisspeltStep {
  @Step('charge', { retri: { maxAttempts: 3 } } as never) async charge() {}
}

const QUEUES = {
  five: { concurrency: 5 },
  single: { concurrency: 1 },
  tenants: { concurrency: 4, partitionConcurrency: 1 },
  paced: { rateLimit: { limit: 3, period: '1s' as const } },
};

/** The most visits inside one another, from the recorded entries and exits (per partition when `byPartition`). */
async function maxOverlap(db: Db, byPartition = false): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT COALESCE(max(n), 0)::int AS n FROM (
       SELECT (SELECT count(*) FROM ${visitsTable} o
               WHERE o.entered_at <= v.entered_at AND (o.exited_at IS NULL OR o.exited_at > v.entered_at)
                 ${byPartition ? 'AND o.partition_key IS NOT DISTINCT FROM v.partition_key' : ''}) AS n
       FROM ${visitsTable} v) x`,
  );
  return row.n;
}

describe('queues: flow control counted on executing runs, cluster-wide', () => {
  const dbs: Db[] = [];
  let db: Db;
  const fresh = async () => {
    const schema = uniqueSchema('q');
    db = new Db(schema);
    dbs.push(db);
    visitsTable = `"${schema}".visits`;
    return schema;
  };
  const boot = (schema: string, options: Record<string, unknown> = {}) =>
    startApp({
      schema,
      providers: [Work, Limited, Approval, Quick, BrokenApproval, MerchantOrders, MisplacedChild, MisspeltInlineStep],
      options: { queues: QUEUES, ...options },
    });
  const visitsTableReady = () =>
    db.query(
      `CREATE TABLE ${visitsTable} (id bigserial PRIMARY KEY, run_id text NOT NULL, partition_key text,
                                    entered_at timestamptz NOT NULL DEFAULT clock_timestamp(), exited_at timestamptz)`,
    );
  afterAll(async () => {
    for (const each of dbs) await each.dropSchema();
    await pool.end();
  });

  it('concurrency is never exceeded by even one run: three instances, 200 runs of a queue of 5, overlap measured from the table', async () => {
    const schema = await fresh();
    const apps: DurableTestApp[] = [];
    try {
      for (let i = 0; i < 3; i++) apps.push(await boot(schema));
      await visitsTableReady();
      const clients = apps.map((app) => app.get(WorkflowClient));
      await Promise.all(Array.from({ length: 200 }, (_, i) => clients[i % 3].start(Limited, { holdMs: 15 })));
      await eventually(async () => (await db.count('runs', `status = 'completed'`)) === 200, '200 runs completed', 60_000);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
    expect(await db.count('runs', `workflow = 'limited' AND began_at IS NOT NULL`)).toBe(200);
    const overlap = await maxOverlap(db);
    expect(overlap).toBeLessThanOrEqual(5);
    expect(overlap).toBeGreaterThanOrEqual(2); // the slots are used, not merely never exceeded
  });

  it('partitions: one run per tenant at a time, and a tenant with 1,000 pending runs does not starve a tenant with one', async () => {
    const schema = await fresh();
    const app = await boot(schema);
    try {
      await visitsTableReady();
      const client = app.get(WorkflowClient);
      for (let i = 0; i < 1_000; i += 100) {
        await Promise.all(
          Array.from({ length: 100 }, () =>
            client.start(Limited, { partition: 'big', holdMs: 40 }, { queue: 'tenants', partitionKey: 'big' }),
          ),
        );
      }
      const small = await client.start(Limited, { partition: 'small', holdMs: 1 }, { queue: 'tenants', partitionKey: 'small' });
      await small.result();
      // The small tenant's run went while the big one's backlog was still deep.
      expect(await db.count('runs', `partition_key = 'big' AND status = 'pending'`)).toBeGreaterThan(800);
      await Promise.all(
        [0, 1, 2].map((i) => client.start(Limited, { partition: `t${i}`, holdMs: 30 }, { queue: 'tenants', partitionKey: `t${i}` })),
      );
      await eventually(
        async () => (await db.count('runs', `partition_key LIKE 't%' AND status = 'completed'`)) === 3,
        'the other tenants ran',
      );
    } finally {
      await app.close();
    }
    expect(await maxOverlap(db, true)).toBe(1);
  });

  it("a child placed in a tenant's partition (startChild's partitionKey and priority) waits for its partition's slot; a child of an unqueued workflow given a partition, a misspelt startChild option and a misspelt ctx.step option are refused, naming the option", async () => {
    const schema = await fresh();
    const app = await boot(schema);
    try {
      await visitsTableReady();
      const client = app.get(WorkflowClient);
      const parent = await client.start(MerchantOrders, ['big', 'big', 'big', 'small', 'express']);
      await parent.result({ timeout: '20s' });
      const children = await db.query<{ partition_key: string; priority: number }>(
        `SELECT partition_key, priority FROM durable.runs WHERE parent_id = $1 ORDER BY parent_step`,
        [parent.runId],
      );
      expect(children).toEqual([
        { partition_key: 'big', priority: 100 },
        { partition_key: 'big', priority: 100 },
        { partition_key: 'big', priority: 100 },
        { partition_key: 'small', priority: 100 },
        { partition_key: 'express', priority: 10 },
      ]);
      const misplaced = await client.start(MisplacedChild, undefined);
      await expect(misplaced.result({ timeout: '5s' })).rejects.toThrow(/partitionKey needs a queue/);
      expect(await db.count('runs', 'parent_id = $1', [misplaced.runId])).toBe(0);
      const misspelt = await client.start(MisplacedChild, { misspelt: true });
      await expect(misspelt.result({ timeout: '5s' })).rejects.toThrow(
        /startChild\("quick"\): unknown option partitonKey; it takes step, detached, queue, partitionKey, priority/,
      );
      expect(await db.count('runs', 'parent_id = $1', [misspelt.runId])).toBe(0);
      const inline = await client.start(MisspeltInlineStep, undefined);
      await expect(inline.result({ timeout: '5s' })).rejects.toThrow('Step "charge": unknown option retri; it takes key, retry, schema');
      expect(await db.count('steps', 'run_id = $1', [inline.runId])).toBe(0);
    } finally {
      await app.close();
    }
    expect(await maxOverlap(db, true)).toBe(1);
  });

  it('a run pending in a queue that a deploy removed says so (cause undeclared), and an instance booting without the queue warns, naming it', async () => {
    const schema = await fresh();
    const before = await startApp({
      schema,
      providers: [Quick],
      options: { queues: { retired: { concurrency: 1 } }, worker: { enabled: false } },
    });
    let runId: string;
    try {
      runId = (await before.client.start(Quick, { n: 1 }, { queue: 'retired' })).runId; // pending: no worker admits it
    } finally {
      await before.close();
    }
    const warnings: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    let after: DurableTestApp;
    try {
      after = await boot(schema);
    } finally {
      warn.mockRestore();
    }
    try {
      expect(warnings.filter((w) => w.includes('"retired"') && w.includes('does not declare'))).toHaveLength(1);
      expect((await after.client.getRun(runId)).waiting).toMatchObject({ kind: 'queue', queue: 'retired', cause: 'undeclared' });
    } finally {
      await after.close();
    }
  });

  it('parked runs hold no slot: a queue of 1 with 100 runs parked on a signal still executes a new run at once', async () => {
    const schema = await fresh();
    const app = await boot(schema, { inlineWaitMs: 0 });
    try {
      const client = app.get(WorkflowClient);
      const parked = await Promise.all(Array.from({ length: 100 }, () => client.start(Approval, undefined)));
      await eventually(
        async () => (await db.count('runs', `status = 'waiting' AND wait_kind = 'signal'`)) === 100,
        '100 runs parked',
        30_000,
      );
      const quick = await client.start(Quick, { n: 7 }, { queue: 'single' });
      expect(await quick.result()).toBe(7);
      const signals = app.get(SignalService);
      await Promise.all(parked.map((run) => signals.signal(run.runId, go, null)));
      for (const run of parked) expect(await run.result()).toBe('approved');
    } finally {
      await app.close();
    }
  });

  it("a queued start NOTIFYs its queue's name on the queue channel: another instance admits at once, and a freed slot admits what a limit held back, no sweeper", async () => {
    const schema = await fresh();
    const listener = new Client(databaseUrl());
    await listener.connect();
    const heard: Array<{ channel: string; payload?: string }> = [];
    listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload }));
    await listener.query(`LISTEN "${queueChannel(schema)}"; LISTEN "${wakeChannel(schema)}"`);
    const worker = await boot(schema, { sweeper: false });
    const starter = await boot(schema, { sweeper: false, worker: { enabled: false } });
    try {
      await visitsTableReady();
      const client = starter.get(WorkflowClient);
      const first = await client.start(Limited, { holdMs: 300 }, { queue: 'single' });
      const second = await client.start(Limited, { holdMs: 1 }, { queue: 'single' });
      // Only the worker instance executes: the NOTIFY woke its admission, the first run's end its second.
      await first.result({ timeout: '10s' });
      await second.result({ timeout: '10s' });
      // Two starts, then the first run's end: it gave the slot back while the second was pending. The
      // second's end, with nothing pending, says nothing.
      expect(heard).toEqual([
        { channel: queueChannel(schema), payload: 'single' },
        { channel: queueChannel(schema), payload: 'single' },
        { channel: queueChannel(schema), payload: 'single' },
      ]);
      expect(await maxOverlap(db)).toBe(1);
    } finally {
      await Promise.all([worker.close(), starter.close()]);
      await listener.end();
    }
  });

  it('a slot given back on one instance is taken by another at once: the end NOTIFYs the queue while runs are pending, no sweeper', async () => {
    const schema = await fresh();
    const a = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES, sweeper: false, worker: { concurrency: 1 } } });
    let closing: Promise<void> | undefined;
    let b: DurableTestApp | undefined;
    try {
      const holder = await a.client.start(Held, undefined, { queue: 'single' });
      await eventually(async () => Held.entered.has(holder.runId), 'the holder in its step on A');
      const waiting = await a.client.start(Quick, { n: 7 }, { queue: 'single' });
      // B knows the queue but its sweeper would not tick for a minute; its boot found the queue full.
      b = await boot(schema, { sweeper: { intervalMs: 60_000 } });
      // A stops taking work (so it cannot admit the waiting run itself), then its holder ends within the grace.
      closing = a.close();
      const worker = a.get(DurableWorker) as unknown as { accepting: boolean };
      await eventually(async () => !worker.accepting, 'A no longer taking work');
      Held.release();
      expect(await b.client.handle<number>(waiting.runId).result({ timeout: '10s' })).toBe(7);
      await closing;
      const [run] = await db.query<{ lease_owner: string | null; status: string }>(`SELECT status FROM durable.runs WHERE id = $1`, [
        holder.runId,
      ]);
      expect(run.status).toBe('completed');
    } finally {
      Held.release();
      await Promise.allSettled([closing ?? a.close(), b?.close()]);
    }
  });

  it('an operator cancelling a queued run as it executes gives its slot back at once: the cancel NOTIFYs the queue, no sweeper', async () => {
    const schema = await fresh();
    Held.close();
    const a = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES, sweeper: false, worker: { concurrency: 1 } } });
    const operator = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES, worker: { enabled: false } } });
    let b: DurableTestApp | undefined;
    try {
      const holder = await a.client.start(Held, undefined, { queue: 'single' });
      await eventually(async () => Held.entered.has(holder.runId), 'the holder in its step on A');
      const waiting = await a.client.start(Quick, { n: 8 }, { queue: 'single' });
      // B's boot found the queue full and its sweeper would not tick for a minute. A's one slot stays
      // taken (its execution is inside the step, which a cancel does not interrupt): only B can admit.
      b = await boot(schema, { sweeper: { intervalMs: 60_000 } });
      await operator.client.cancel(holder.runId, 'not needed');
      expect(await b.client.handle<number>(waiting.runId).result({ timeout: '10s' })).toBe(8);
      expect(a.get(DurableWorker).isExecuting(waiting.runId)).toBe(false);
    } finally {
      Held.release();
      await Promise.allSettled([a.close(), operator.close(), b?.close()]);
    }
  });

  it("a queue with no concurrency is not capped by the asking instance's room: its runs executing on another instance leave this one free to admit", async () => {
    const schema = await fresh();
    Held.close();
    const queues = { ...QUEUES, perTenant: { partitionConcurrency: 1 } };
    const a = await startApp({ schema, providers: [Held, Quick], options: { queues, sweeper: false, worker: { concurrency: 1 } } });
    let b: DurableTestApp | undefined;
    try {
      const holder = await a.client.start(Held, undefined, { queue: 'perTenant', partitionKey: 't1' });
      await eventually(async () => Held.entered.has(holder.runId), 'the holder in its step on A');
      // B has room for one run and the queue has one executing (on A, which has no room): B admits.
      b = await startApp({ schema, providers: [Held, Quick], options: { queues, sweeper: false, worker: { concurrency: 1 } } });
      const run = await b.client.start(Quick, { n: 4 }, { queue: 'perTenant', partitionKey: 't2' });
      expect(await run.result({ timeout: '10s' })).toBe(4);
    } finally {
      Held.release();
      await Promise.allSettled([a.close(), b?.close()]);
    }
  });

  it('queues with work take turns at admission: a queue first by name with a backlog does not take every ask; an admitted run is said to have no parent', async () => {
    const schema = await fresh();
    const queues = { ...QUEUES, alpha: { concurrency: 10 }, beta: { concurrency: 10 } };
    // No worker: the queued starts stay pending, and only the admissions below take them.
    const app = await startApp({ schema, providers: [Quick], options: { queues, worker: { enabled: false } } });
    try {
      for (let i = 0; i < 5; i++) await app.client.start(Quick, { n: i }, { queue: 'alpha' });
      await app.client.start(Quick, { n: 9 }, { queue: 'beta' });
      expect(await db.count('runs', `status = 'pending'`)).toBe(6);
      // Admissions of one run each (what a freed lane asks), by a repository of its own (its own turn).
      const repository = new QueueRepository(app.get(DurableDatabase));
      const resolved = [...resolveQueues({ alpha: queues.alpha, beta: queues.beta }).values()];
      const admitted: string[] = [];
      for (let i = 0; i < 2; i++) {
        const { claimed } = await repository.admit(resolved, 'test-admitter', 60_000, 1, ['quick'], { probe: true });
        for (const run of claimed) admitted.push((await db.query(`SELECT queue FROM durable.runs WHERE id = $1`, [run.id]))[0].queue);
        // Said to have no parent, so its end leaves out the parent's wake; queued, it gives its slot back.
        expect(claimed.map((run) => [run.parentless, run.unqueued])).toEqual([[true, false]]);
      }
      expect(admitted.sort()).toEqual(['alpha', 'beta']);
    } finally {
      await app.close();
    }
  });

  it('a start takes a free slot of its queue and begins its run at once, with no admission; while a run of the queue is pending it goes through admission behind it', async () => {
    const schema = await fresh();
    Held.close();
    // Only `starter` knows `held`: A's admission never takes the pending held run, so it stays pending.
    const a = await startApp({ schema, providers: [Quick], options: { queues: QUEUES, sweeper: false } });
    const starter = await startApp({
      schema,
      providers: [Held, Quick],
      options: { queues: QUEUES, sweeper: false, worker: { enabled: false } },
    });
    let drainer: DurableTestApp | undefined;
    const events = async (runId: string) =>
      (await db.query<{ event: string }>(`SELECT event FROM durable.history WHERE run_id = $1 ORDER BY id`, [runId])).map((r) => r.event);
    try {
      expect(await db.count('queue_slots', `queue = 'five'`)).toBe(5); // made at A's boot
      const direct = await a.client.start(Quick, { n: 1 }, { queue: 'five' });
      expect(await direct.result()).toBe(1);
      expect(await events(direct.runId)).toEqual(['started', 'completed']);
      expect(await db.count('queue_slots', 'holder IS NOT NULL')).toBe(0); // its end gave the slot back

      const pending = await starter.client.start(Held, undefined, { queue: 'single' });
      expect((await starter.client.getRun(pending.runId)).status).toBe('pending');
      const behind = await a.client.start(Quick, { n: 2 }, { queue: 'single' });
      expect(await behind.result({ timeout: '10s' })).toBe(2);
      expect(await events(behind.runId)).toEqual(['started', 'claimed', 'completed']);

      drainer = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES, sweeper: false } });
      await eventually(async () => Held.entered.has(pending.runId), 'the held run admitted on the instance that knows it');
      const [slot] = await db.query<{ holder: string }>(`SELECT holder FROM durable.queue_slots WHERE queue = 'single'`);
      expect(slot.holder).toBe(pending.runId);
      Held.release();
      await pending.result({ timeout: '10s' });
      expect(await db.count('queue_slots', 'holder IS NOT NULL')).toBe(0);
    } finally {
      Held.release();
      await Promise.allSettled([a.close(), starter.close(), drainer?.close()]);
    }
  });

  it('slots are made whole at boot: missing ones made (more when concurrency is raised), one held by a run that no longer executes freed, a run executing without one given one', async () => {
    const schema = await fresh();
    await (await boot(schema, { worker: { enabled: false } })).close(); // migrated, no slots (no worker)
    expect(await db.count('queue_slots')).toBe(0);
    // What an older version leaves behind during an upgrade: a slot of a run it ended, a run it began without one.
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, queue, lease_owner, lease_token, wake_at, finished_at)
       VALUES ('ended', 'quick', 'completed', '{}', 'five', NULL, 1, NULL, now()),
              ('begun', 'quick', 'running', '{}', 'five', 'elsewhere', 1, now() + interval '1 hour', NULL)`,
    );
    await db.query(`INSERT INTO durable.queue_slots (queue, slot, holder) VALUES ('five', 1, 'ended')`);
    const app = await boot(schema, { sweeper: false });
    try {
      const slots = await db.query<{ queue: string; slot: number; holder: string | null }>(
        `SELECT queue, slot, holder FROM durable.queue_slots ORDER BY queue, slot`,
      );
      expect(slots.filter((s) => s.queue === 'five').map((s) => s.holder)).toEqual(['begun', null, null, null, null]);
      expect(slots.filter((s) => s.queue === 'single')).toHaveLength(1);
      expect(slots.filter((s) => s.queue === 'tenants')).toHaveLength(4);
      expect(slots.filter((s) => s.queue === 'paced')).toHaveLength(0); // no concurrency, no slots
      await app.client.cancel('begun', 'left over');
      expect(await db.count('queue_slots', 'holder IS NOT NULL')).toBe(0);
    } finally {
      await app.close();
    }
    // A deploy that raises a queue's concurrency makes the new slots at its boot.
    const raised = await boot(schema, { sweeper: false, queues: { ...QUEUES, five: { concurrency: 7 } } });
    await raised.close();
    expect(await db.count('queue_slots', `queue = 'five'`)).toBe(7);
  });

  it('a queued run still executing at shutdown is given back pending and gives its slot back; another instance takes it', async () => {
    const schema = await fresh();
    Held.close();
    const a = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES, sweeper: false, shutdownGraceMs: 0 } });
    let b: DurableTestApp | undefined;
    try {
      const run = await a.client.start(Held, undefined, { queue: 'single' });
      await eventually(async () => Held.entered.has(run.runId), 'the run in its step on A');
      expect(await db.count('queue_slots', `queue = 'single' AND holder = $1`, [run.runId])).toBe(1);
      await a.close();
      expect((await db.query<{ status: string }>(`SELECT status FROM durable.runs WHERE id = $1`, [run.runId]))[0].status).toBe('pending');
      expect(await db.count('queue_slots', 'holder IS NOT NULL')).toBe(0);
      Held.release();
      b = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES, sweeper: false } });
      await b.client.handle(run.runId).result({ timeout: '10s' });
      expect(await db.count('queue_slots', 'holder IS NOT NULL')).toBe(0);
    } finally {
      Held.release();
      await Promise.allSettled([a.close(), b?.close()]);
    }
  });

  it('priority first (lower runs first), then first in, first out; a pending run says which queue holds it and why', async () => {
    const schema = await fresh();
    const app = await boot(schema, { inlineWaitMs: 0 });
    try {
      const client = app.get(WorkflowClient);
      // The queue's one slot is taken by a run that waits in-process for a signal is not possible (it parks): hold it with a long step.
      await visitsTableReady();
      const holder = await client.start(Limited, { holdMs: 1_500 }, { queue: 'single' });
      await eventually(async () => (await db.count('runs', `id = $1 AND status = 'running'`, [holder.runId])) === 1, 'the holder runs');
      const low = await client.start(Quick, { n: 300 }, { queue: 'single', priority: 300 });
      const firstDefault = await client.start(Quick, { n: 100 }, { queue: 'single' });
      const urgent = await client.start(Quick, { n: 0 }, { queue: 'single', priority: 0 });
      const secondDefault = await client.start(Quick, { n: 101 }, { queue: 'single' });
      expect((await client.getRun(low.runId)).waiting).toMatchObject({ kind: 'queue', queue: 'single', cause: 'concurrency' });
      expect((await client.listRuns({ waitingFor: 'queue' })).runs.map((r) => r.runId).sort()).toEqual(
        [low, firstDefault, urgent, secondDefault].map((h) => h.runId).sort(),
      );
      for (const run of [holder, low, firstDefault, urgent, secondDefault]) await run.result();
      const order = await db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE workflow = 'quick' ORDER BY began_at`);
      expect(order.map((r) => r.id)).toEqual([urgent, firstDefault, secondDefault, low].map((h) => h.runId));
    } finally {
      await app.close();
    }
  });

  it("runs started one after another in an application's transaction keep their order in line, though their ids sort otherwise", async () => {
    const schema = await fresh();
    const app = await startApp({ schema, providers: [Held, Quick], options: { queues: QUEUES } });
    try {
      const client = app.get(WorkflowClient);
      Held.close();
      const holder = await client.start(Held, undefined, { queue: 'single' });
      await eventually(async () => Held.entered.has(holder.runId), 'the holder in its step');
      // Business keys as ids: ship:10 sorts before ship:8.
      const ids = await app.get<DataSource>(DURABLE_DATA_SOURCE as never).transaction(async (manager) => {
        const started: string[] = [];
        for (let n = 8; n < 14; n++)
          started.push((await client.start(Quick, { n }, { queue: 'single', runId: `ship:${n}`, manager })).runId);
        return started;
      });
      // Before: every start of the transaction was due at its start (now()), and the id decided: ship:8 was told it was 5th.
      for (const [i, id] of ids.entries()) expect((await client.getRun(id)).waiting).toMatchObject({ kind: 'queue', position: i + 1 });
      Held.release();
      for (const id of ids) await client.handle(id).result({ timeout: '20s' });
      const order = await db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE workflow = 'quick' ORDER BY began_at`);
      expect(order.map((r) => r.id)).toEqual(ids);
    } finally {
      Held.release();
      await app.close();
    }
  });

  it('a rate limit holds across three instances: no more than 3 runs begin in any sliding second, over at least three windows', async () => {
    const schema = await fresh();
    const apps: DurableTestApp[] = [];
    try {
      for (let i = 0; i < 3; i++) apps.push(await boot(schema));
      const clients = apps.map((app) => app.get(WorkflowClient));
      await Promise.all(Array.from({ length: 12 }, (_, i) => clients[i % 3].start(Quick, { n: i }, { queue: 'paced' })));
      await eventually(async () => (await db.count('runs', `status = 'completed'`)) === 12, '12 runs completed', 30_000);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
    const began = (
      await db.query<{ ms: number }>(`SELECT extract(epoch FROM began_at) * 1000 AS ms FROM durable.runs ORDER BY began_at`)
    ).map((r) => Number(r.ms));
    for (let i = 0; i + 3 < began.length; i++) expect(began[i + 3] - began[i]).toBeGreaterThanOrEqual(1_000);
    expect(began[11] - began[0]).toBeGreaterThanOrEqual(3_000);
  });

  it("an admission that waited for its queue's lock stamps its runs' beginning after the wait, not at its transaction's start (the rate window counts them from then)", async () => {
    const schema = await fresh();
    // No worker: the queued start stays pending, and only the admission below takes it.
    const app = await startApp({ schema, providers: [Quick], options: { queues: QUEUES, worker: { enabled: false } } });
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      const run = await app.client.start(Quick, { n: 1 }, { queue: 'paced' });
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`nestjs-durable:queue:${schema}:paced`]);
      const repository = new QueueRepository(app.get(DurableDatabase));
      const paced = resolveQueues({ paced: QUEUES.paced }).get('paced')!;
      const admitted = repository.admit([paced], 'test-admitter', 60_000, 1, ['quick'], { probe: true });
      await eventually(
        async () =>
          (
            await db.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND query LIKE $1`,
              [`%${schema}:paced%`],
            )
          ).length === 1,
        'the admission waiting for the queue lock',
      );
      const [{ released }] = await holder.query<{ released: Date }>(`SELECT clock_timestamp() AS released`).then((r) => r.rows);
      await holder.query('COMMIT');
      expect((await admitted).claimed.map((c) => c.id)).toEqual([run.runId]);
      const [{ began }] = await db.query<{ began: Date }>(`SELECT began_at AS began FROM durable.runs WHERE id = $1`, [run.runId]);
      expect(began.getTime()).toBeGreaterThanOrEqual(released.getTime());
    } finally {
      await holder.end();
      await app.close();
    }
  });

  it('a run woken after a park needs a slot but not the rate window: admitted ahead of a fresh run the used-up window holds back', async () => {
    const schema = await fresh();
    const app = await boot(schema, {
      inlineWaitMs: 0,
      queues: { ...QUEUES, hourly: { concurrency: 5, rateLimit: { limit: 1, period: '1h' } } },
    });
    try {
      const client = app.get(WorkflowClient);
      // The hour's one beginning goes to the run that parks; a fresh run started after it waits for the window.
      const parked = await client.start(Approval, undefined, { queue: 'hourly' });
      await eventually(async () => (await client.getRun(parked.runId)).status === 'waiting', 'the first run parks on its signal');
      const fresh = await client.start(Quick, { n: 1 }, { queue: 'hourly' });
      await eventually(async () => {
        const { waiting } = await client.getRun(fresh.runId);
        return waiting?.kind === 'queue' && waiting.cause === 'rate';
      }, 'the fresh run is held back by the rate window');
      await app.get(SignalService).signal(parked.runId, go, null);
      expect(await parked.result()).toBe('approved');
      const held = await client.getRun(fresh.runId);
      expect(held.status).toBe('pending');
      expect(held.waiting).toMatchObject({ kind: 'queue', queue: 'hourly', cause: 'rate' });
      expect(await db.count('runs', `id = $1 AND began_at IS NULL`, [fresh.runId])).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('deduplication: while a run with the id is unfinished a start returns it; once it ended, a start makes a new run; a failed run whose id a newer one holds cannot be retried', async () => {
    const schema = await fresh();
    const app = await boot(schema, { inlineWaitMs: 0 });
    try {
      const client = app.get(WorkflowClient);
      const first = await client.start(Approval, undefined, { deduplicationId: 'order-1' });
      const again = await client.start(Approval, undefined, { deduplicationId: 'order-1' });
      expect(again.runId).toBe(first.runId);
      expect(again.created).toBe(false);
      // Another workflow of the queue with the same id: a clear error, not the holder as a run of this workflow.
      const runs = await db.count('runs');
      await expect(client.start(BrokenApproval, undefined, { deduplicationId: 'order-1' })).rejects.toThrow(
        `The deduplication id "order-1" of queue "single" is held by run "${first.runId}" of workflow "approval", not "broken-approval"`,
      );
      expect(await db.count('runs')).toBe(runs);
      await app.get(SignalService).signal(first.runId, go, null);
      await first.result();
      const after = await client.start(Approval, undefined, { deduplicationId: 'order-1' });
      expect(after.created).toBe(true);
      expect(after.runId).not.toBe(first.runId);

      // A failed run whose id a newer unfinished run holds cannot be retried (both would hold it): a clear error, nothing changed.
      const failed = await client.start(BrokenApproval, undefined, { deduplicationId: 'order-2' });
      await expect(failed.result()).rejects.toThrow('broken');
      const holder = await client.start(Approval, undefined, { deduplicationId: 'order-2' });
      expect(holder.created).toBe(true);
      await expect(client.retry(failed.runId)).rejects.toThrow(
        `Cannot retry run "${failed.runId}": run "${holder.runId}" of its queue holds its deduplication id and has not ended`,
      );
      expect(await client.getRun(failed.runId)).toMatchObject({ status: 'failed', attempt: 1 });
      await app.get(SignalService).signal(holder.runId, go, null);
      await holder.result();
      await client.retry(failed.runId);
      await expect(failed.result()).rejects.toThrow('broken');
      expect((await client.getRun(failed.runId)).attempt).toBe(2);
    } finally {
      await app.close();
    }
  });

  /**
   * A start with a deduplication id whose holder (a waiting Approval) is found by the start's insert; `beforeFirstRead`
   * runs before the start's first read of the holder (and may throw, as that read would). Answers the start and the reads.
   */
  const startAroundHolderRead = async (
    app: DurableTestApp,
    dedup: string,
    runId: string,
    beforeFirstRead: (holder: string) => Promise<void>,
  ) => {
    const client = app.get(WorkflowClient);
    const holder = await client.start(Approval, undefined, { deduplicationId: dedup });
    const database = app.get(DurableDatabase);
    const query = database.query.bind(database);
    let holderReads = 0;
    const reads = jest.spyOn(database, 'query').mockImplementation(async (sql, ...rest) => {
      if (sql.includes('AS holder') && ++holderReads === 1) await beforeFirstRead(holder.runId);
      return query(sql, ...rest);
    });
    try {
      return { holder, started: await client.start(Approval, undefined, { deduplicationId: dedup, runId }), holderReads };
    } finally {
      reads.mockRestore();
    }
  };

  it("deduplication: a start whose holder ends between the start's insert and its read of the holder makes a new run, never answering an id that does not exist", async () => {
    const app = await boot(await fresh(), { inlineWaitMs: 0 });
    try {
      // The holder ends just before the start reads it (the start's insert found it unfinished).
      const { started, holderReads } = await startAroundHolderRead(app, 'order-3', 'after-order-3', (holder) =>
        db.query(`UPDATE durable.runs SET status = 'completed', finished_at = now() WHERE id = $1`, [holder]).then(() => undefined),
      );
      expect(holderReads).toBe(1);
      expect(started).toMatchObject({ runId: 'after-order-3', created: true });
      expect(await db.count('runs', `id = 'after-order-3' AND deduplication_id = 'order-3'`)).toBe(1);
      await app.get(SignalService).signal('after-order-3', go, null);
      await started.result();
    } finally {
      await app.close();
    }
  });

  it('deduplication: a session lost while a start reads the holder is tried again, and the start returns the holder', async () => {
    const app = await boot(await fresh(), { inlineWaitMs: 0 });
    try {
      // The first read of the holder fails as a terminated session does (57P01); the next goes through.
      const { holder, started, holderReads } = await startAroundHolderRead(app, 'order-4', 'after-order-4', async () => {
        throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
      });
      expect(holderReads).toBe(2);
      expect(started).toMatchObject({ runId: holder.runId, created: false });
      await app.get(SignalService).signal(holder.runId, go, null);
      await holder.result();
    } finally {
      await app.close();
    }
  });

  it("debounce: starts with one key make one run with the last input, its start moved back but never past the first start + maxDelay, a later start's too", async () => {
    const schema = await fresh();
    const app = await boot(schema);
    try {
      const client = app.get(WorkflowClient);
      const debounce = { key: 'user-42', delay: '3s' as const, maxDelay: '4s' as const };
      const first = await client.start(Quick, { n: 1 }, { debounce });
      const [{ until: firstUntil, cap }] = await db.query<{ until: Date; cap: Date }>(
        `SELECT wake_at AS until, debounce_until AS cap FROM durable.runs WHERE id = $1`,
        [first.runId],
      );
      expect(cap.getTime() - firstUntil.getTime()).toBe(1_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // the second start comes later: its delay would pass the cap
      const second = await client.start(Quick, { n: 2 }, { debounce });
      expect(second.runId).toBe(first.runId);
      expect(second.created).toBe(false);
      const [{ until }] = await db.query<{ until: Date }>(`SELECT wake_at AS until FROM durable.runs WHERE id = $1`, [first.runId]);
      expect(until.getTime()).toBe(cap.getTime());
      // RunView names the key and, until it begins, the instant the cap makes it start by.
      expect((await client.getRun(first.runId)).debounce).toEqual({ key: 'user-42', startsBy: cap });
      expect(await first.result()).toBe(2);
      const ran = await client.getRun(first.runId);
      expect(ran.debounce).toEqual({ key: 'user-42' });
      expect(ran.beganAt!.getTime()).toBeGreaterThanOrEqual(cap.getTime()); // it began at its cap, or just after
      expect((await client.listRuns({ workflow: 'quick' })).runs.map((r) => r.debounce)).toEqual([{ key: 'user-42' }]);
      expect(await db.count('runs')).toBe(1);
      const next = await client.start(Quick, { n: 3 }, { debounce });
      expect(next.created).toBe(true);
      expect(next.runId).not.toBe(first.runId);

      // A later start's maxDelay caps the run as well, from its first start (before: only the first start's counted).
      const uncapped = await client.start(Quick, { n: 4 }, { debounce: { key: 'user-7', delay: '20s' } });
      await eventually(
        async () => (await db.count('runs', `id = $1 AND created_at < now() - interval '1 second'`, [uncapped.runId])) === 1,
        'a second since the first start',
      );
      // Its own delay would start the run 3 s from now, 4 s or more after the first start; its cap, 3 s after the first start.
      await client.start(Quick, { n: 5 }, { debounce: { key: 'user-7', delay: '3s', maxDelay: '3s' } });
      // The start the join moved it to, as its history row has it (a claim at the cap may have moved wake_at on since).
      const [joined] = await db.query<{ created: Date; until: string; cap: Date }>(
        `SELECT r.created_at AS created, h.detail->>'startAt' AS until, r.debounce_until AS cap
         FROM durable.runs r JOIN durable.history h ON h.run_id = r.id AND h.event = 'debounced' WHERE r.id = $1`,
        [uncapped.runId],
      );
      expect(new Date(joined.until)).toEqual(joined.cap);
      expect(joined.cap.getTime() - joined.created.getTime()).toBeGreaterThan(2_990);
      expect(joined.cap.getTime() - joined.created.getTime()).toBeLessThanOrEqual(3_000);
      expect(await uncapped.result({ timeout: '10s' })).toBe(5);
    } finally {
      await app.close();
    }
  });

  it("a pending run's place in line, on a single run's read: admission's order (priority, then due time), in its partition where the queue limits partitions, counted up to 10,000 ahead", async () => {
    const schema = await fresh();
    const app = await boot(schema, { worker: { enabled: false } }); // nothing admitted: the places hold still
    try {
      const client = app.get(WorkflowClient);
      const first = await client.start(Quick, {}, { queue: 'single' });
      const second = await client.start(Quick, {}, { queue: 'single' });
      const urgent = await client.start(Quick, {}, { queue: 'single', priority: 0 });
      const placeOf = async (runId: string) => {
        const { waiting } = await client.getRun(runId);
        return waiting?.kind === 'queue' ? waiting.position : 'not queued';
      };
      expect((await client.getRun(first.runId)).waiting).toMatchObject({ positionIn: 'queue' });
      expect([await placeOf(urgent.runId), await placeOf(first.runId), await placeOf(second.runId)]).toEqual([1, 2, 3]);
      expect((await client.getRun(first.runId)).beganAt).toBeUndefined(); // nor has it begun
      // A run past its deadline before it began is passed over by admission (the sweeper fails it): not counted.
      await db.query(`UPDATE durable.runs SET deadline = now() - interval '1 minute' WHERE id = $1`, [urgent.runId]);
      expect(await placeOf(first.runId)).toBe(1);
      await db.query(`UPDATE durable.runs SET deadline = NULL WHERE id = $1`, [urgent.runId]);
      // A queue that limits partitions: a run's place is in its partition (what it waits on; other partitions' runs
      // are admitted beside it), whether or not the partition is at its limit.
      const [acme1, acme2, globex] = [
        await client.start(Quick, {}, { queue: 'tenants', partitionKey: 'acme' }),
        await client.start(Quick, {}, { queue: 'tenants', partitionKey: 'acme' }),
        await client.start(Quick, {}, { queue: 'tenants', partitionKey: 'globex' }),
      ];
      expect([await placeOf(acme1.runId), await placeOf(acme2.runId), await placeOf(globex.runId)]).toEqual([1, 2, 1]);
      expect((await client.getRun(acme2.runId)).waiting).toMatchObject({ positionIn: 'partition' });
      await db.query(`UPDATE durable.runs SET status = 'running', began_at = now() WHERE id = $1`, [acme1.runId]);
      expect([await placeOf(acme2.runId), await placeOf(globex.runId)]).toEqual([1, 1]);
      // A list reads no places (a count per run); the run itself, once begun, has none.
      const listed = (await client.listRuns({ waitingFor: 'queue' })).runs.map((r) => r.waiting);
      expect(listed).toHaveLength(5);
      for (const waiting of listed) expect(waiting).toEqual(expect.not.objectContaining({ position: expect.anything() }));
      // A deep backlog ahead is counted up to 10,000: the place reads 10,001.
      await db.query(
        `INSERT INTO durable.runs (id, workflow, status, input, wake_at, queue, priority)
         SELECT 'deep-' || n, 'quick', 'pending', '{}', now() - interval '1 hour', 'single', 100 FROM generate_series(1, 10050) n`,
      );
      expect(await placeOf(first.runId)).toBe(10_001);
      expect(await placeOf(urgent.runId)).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('GET /queues: each queue with its limits, running runs, pending runs by cause, deepest partitions and rate window', async () => {
    const schema = await fresh();
    const token = 'queues-api-token-0123456789';
    const app = await startApp({
      schema,
      providers: [Work, Limited, Approval, Quick],
      listen: true,
      options: { queues: QUEUES, dashboard: { auth: { token } }, worker: { enabled: false } },
    });
    try {
      const client = app.get(WorkflowClient);
      // No worker here: every run stays pending, so the figures hold still while they are read.
      await Promise.all(Array.from({ length: 6 }, () => client.start(Quick, {}, { queue: 'tenants', partitionKey: 'acme' })));
      await client.start(Quick, {}, { queue: 'tenants', partitionKey: 'globex' });
      await db.query(
        `UPDATE durable.runs SET status = 'running', began_at = now() WHERE id = (SELECT id FROM durable.runs WHERE partition_key = 'acme' LIMIT 1)`,
      );
      // Two runs pending in a queue a deploy removed: listed apart, with their count.
      await db.query(
        `INSERT INTO durable.runs (id, workflow, status, input, wake_at, queue, priority)
         SELECT 'stranded-' || n, 'quick', 'pending', '{}', now(), 'retired', 100 FROM generate_series(1, 2) n`,
      );
      const response = await fetch(`${app.url}/durable/api/queues`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const { queues, undeclared } = (await response.json()) as { queues: Array<Record<string, unknown>>; undeclared: unknown };
      expect(undeclared).toEqual([{ name: 'retired', pending: 2, atLeast: false }]);
      expect(queues.map((q) => q.name)).toEqual(['five', 'single', 'tenants', 'paced']);
      expect(queues.find((q) => q.name === 'tenants')).toEqual({
        name: 'tenants',
        concurrency: 4,
        partitionConcurrency: 1,
        rateLimit: null,
        running: 1,
        // acme is at its limit: its 5 pending runs wait for their partition; globex's one for the next claim.
        pending: { concurrency: 1, partition: 5, rate: 0 },
        partitions: [
          { key: 'acme', pending: 5, running: 1 },
          { key: 'globex', pending: 1, running: 0 },
        ],
        rateWindowUsed: null,
      });
      expect(queues.find((q) => q.name === 'paced')).toMatchObject({ rateLimit: { limit: 3, periodMs: 1_000 }, rateWindowUsed: 0 });
      const globex = (await client.listRuns({ waitingFor: 'queue' })).runs.find((r) => r.partitionKey === 'globex');
      expect(globex?.waiting).toMatchObject({ kind: 'queue', queue: 'tenants', cause: 'concurrency', partitionKey: 'globex' });
      const acme = (await client.listRuns({ waitingFor: 'queue' })).runs.find((r) => r.partitionKey === 'acme');
      expect(acme?.waiting).toMatchObject({ kind: 'queue', cause: 'partition' });
    } finally {
      await app.close();
    }
  });

  it('bad input: unknown queues, bad limits, an empty rate period, unknown options (of a queue, a start, a debounce, a @Workflow, a retry policy, a @Step), a workflow timeout of 0, priorities, a debounce without a key: a clear error naming the option, nothing written', async () => {
    const schema = await fresh();
    await expect(startApp({ schema, providers: [Limited, Work] })).rejects.toThrow(
      'Workflow "limited": unknown queue "five"; the module declares no queues',
    );
    await expect(startApp({ schema, providers: [Misspelt] })).rejects.toThrow(
      'Workflow "misspelt": unknown option timout; it takes retry, signals, channels, schedules, queue, timeout, deadlineGrace',
    );
    // Every run would be past its deadline as it began (a start's own timeout of 0 is refused alike).
    await expect(startApp({ schema, providers: [NoTime] })).rejects.toThrow('Workflow "no-time" timeout must be more than 0');
    await expect(startApp({ schema, providers: [MisspeltRetry] })).rejects.toThrow(
      'workflow "misspelt-retry" retry: unknown option maxAtempts; it takes maxAttempts, initialDelay, backoffFactor, maxDelay',
    );
    await expect(startApp({ schema, providers: [MisspeltStep] })).rejects.toThrow(
      'Step "charge": unknown option retri; it takes key, retry, schema',
    );
    for (const [queues, message] of [
      [{ q: { concurrency: -1 } }, 'Queue "q": concurrency must be a whole number from 1'],
      [{ q: { partitionConcurrency: 1.5 } }, 'Queue "q": partitionConcurrency must be a whole number'],
      [{ q: { rateLimit: { limit: 5 } } }, 'Queue "q": rateLimit must be { limit, period }'],
      [{ 'bad name': {} }, 'Queue name "bad name"'],
      [{ q: { rateLimit: { limit: 5, period: 0 } } }, 'Queue "q": rateLimit.period must be at least 1 ms; got 0'],
      [{ q: { rateLimit: { limit: 5, period: '0.4ms' } } }, 'Queue "q": rateLimit.period must be at least 1 ms; got 0.4ms'],
      [{ q: { concurency: 5 } }, 'Queue "q": unknown option concurency; it takes concurrency, partitionConcurrency, rateLimit'],
      [{ q: { rateLimit: { limit: 5, period: '1s', burst: 2 } } }, 'Queue "q" rateLimit: unknown option burst; it takes limit, period.'],
    ] as const) {
      await expect(startApp({ schema, providers: [Quick], options: { queues } as never })).rejects.toThrow(message);
    }
    const app = await boot(schema);
    try {
      const client = app.get(WorkflowClient);
      const cases: Array<[object, string]> = [
        [{ queue: 'nope' }, 'The start option queue: unknown queue "nope"'],
        [{ priority: 5 }, 'The start option priority needs a queue'],
        [{ queue: 'five', priority: 1001 }, 'priority must be a whole number from 0 to 1000; got 1001'],
        [{ queue: 'five', priority: 1.5 }, 'priority must be a whole number from 0 to 1000; got 1.5'],
        [{ partitionKey: 't1' }, 'The start option partitionKey needs a queue'],
        [{ debounce: { delay: '1s' } }, 'The start option debounce needs a key'],
        [{ debounce: { key: 'k', delay: '2s', maxDelay: '1s' } }, 'debounce.maxDelay (1000 ms) must be at least its delay'],
        [{ debounce: { key: 'k', delay: '1s' }, delay: '1s' }, 'debounce cannot be combined with delay'],
        // Misspelt, the cap or the partition would be dropped without a word: a run put off for ever, a tenant unlimited.
        [
          { debounce: { key: 'k', delay: '1s', maxdelay: '1m' } },
          'The start option debounce: unknown option maxdelay; it takes key, delay, maxDelay',
        ],
        [{ queue: 'five', partitonKey: 't1' }, 'start(): unknown option partitonKey; it takes runId,'],
        [{ timout: '1h' }, 'start(): unknown option timout'],
      ];
      for (const [opts, message] of cases) {
        const error = await client.start(Quick, {}, opts).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toContain(message);
      }
      expect(await db.count('runs')).toBe(0);
    } finally {
      await app.close();
    }
  });
});
