import { DurableWorkflow, NonRetryableError, RetentionService, RunNotFoundError, Workflow, WorkflowContext } from 'nestjs-durable';
import { createJournalPartitionsSql } from 'nestjs-durable/persistence/journal-partitions';
import { pickBatchSql } from 'nestjs-durable/persistence/retention.repository';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { Client } from 'pg';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { StatementGate } from '../setup/statement-gate';

@Workflow('kept-busy')
class KeptBusy implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('work', () => 'done');
    return ctx.waitForSignal<string>('finish');
  }
}

@Workflow('retention-child')
class RetentionChild implements DurableWorkflow<null, string> {
  async run() {
    return 'child-output';
  }
}

@Workflow('retention-failing-child', { retry: { maxAttempts: 1 } })
class FailingChild implements DurableWorkflow<null, string> {
  async run(): Promise<string> {
    throw new NonRetryableError('out of stock');
  }
}

/** Ships in a child, and gets over its failure. */
@Workflow('retention-catching-parent')
class CatchingParent implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const shipment = await ctx.startChild(FailingChild, null, { step: 'ship' });
    return shipment.result().then(
      () => 'shipped',
      () => 'caught',
    );
  }
}

/** Spawns a child, then waits for a signal before it reads the child's result. */
@Workflow('retention-parent')
class RetentionParent implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(RetentionChild, null, { step: 'child' });
    await ctx.waitForSignal('read');
    return child.result();
  }
}

/** Spawns a child, passes a step, then waits for a signal before it reads the child's result: a fork from the step reuses the child. */
@Workflow('retention-forked-parent')
class RetentionForkedParent implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(RetentionChild, null, { step: 'child' });
    await ctx.step('a', () => 'a');
    await ctx.waitForSignal('read');
    return child.result();
  }
}

describe('retention: old finished runs go, with their journal; nothing else is touched', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let a: DurableTestApp;
  let b: DurableTestApp;
  const options = { retention: { completed: '7d', failed: '30d', batchSize: 7, intervalMs: 3_600_000 } } as const;

  beforeAll(async () => {
    [a, b] = [
      await startApp({ schema, providers: [KeptBusy, RetentionParent, RetentionChild, RetentionForkedParent], options }),
      await startApp({ schema, providers: [KeptBusy, RetentionParent, RetentionChild, RetentionForkedParent], options }),
    ];
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await db.dropSchema();
  });

  /**
   * Inserts a run with a journal row of each kind, ended `daysAgo` days ago (or not ended). By default
   * of the day of the runs from before the journal was partitioned (1970-01-01), whose journal retention
   * deletes row by row with them; the drop of a day's partitions is journal-partitions.e2e-spec's.
   */
  const seed = async (id: string, status: string, daysAgo: number | null, runDay = '1970-01-01') => {
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, created_at, run_day, finished_at)
       VALUES ($1, 'kept-busy', $2, 'null', now() - interval '60 days', $4,
               CASE WHEN $3::int IS NULL THEN NULL ELSE now() - $3::int * interval '1 day' END)`,
      [id, status, daysAgo, runDay],
    );
    await db.query(
      `INSERT INTO durable.steps (run_id, run_day, key, kind, outcome, result) VALUES ($1, $2, 'work', 'step', 'ok', '"stale"')`,
      [id, runDay],
    );
    await db.query(`INSERT INTO durable.signals (run_id, run_day, name, payload) VALUES ($1, $2, 'finish', '"stale"')`, [id, runDay]);
    await db.query(`INSERT INTO durable.messages (run_id, run_day, channel, key, seq, payload) VALUES ($1, $2, 'c', 'k', 1, '"x"')`, [
      id,
      runDay,
    ]);
    await db.query(`INSERT INTO durable.history (run_id, run_day, event, actor) VALUES ($1, $2, 'started', 'seed')`, [id, runDay]);
  };

  it("deletes exactly the runs past their kind's age, in batches, once across two instances cleaning at the same time", async () => {
    const doomed: string[] = [];
    const kept: string[] = [];
    for (let i = 0; i < 20; i++) {
      await seed(`old-completed-${i}`, 'completed', 8);
      doomed.push(`old-completed-${i}`);
    }
    await seed('old-failed', 'failed', 31);
    doomed.push('old-failed');
    for (const [id, status, days] of [
      ['recent-completed', 'completed', 6],
      ['recent-failed', 'failed', 29],
      ['old-cancelled', 'cancelled', 400], // no age for cancelled: kept forever
      ['old-waiting', 'waiting', null],
      ['old-pending', 'pending', null],
    ] as const) {
      await seed(id, status, days);
      kept.push(id);
    }
    // An instance that stopped a day ago goes; one that stopped an hour ago stays.
    await db.query(
      `INSERT INTO durable.instances (id, heartbeat_at) VALUES ('stopped-yesterday', now() - interval '25 hours'), ('stopped-lately', now() - interval '1 hour')`,
    );
    // Live runs keep executing while the cleanup runs.
    const live = await Promise.all(Array.from({ length: 10 }, () => a.client.start(KeptBusy, null)));

    const deleted = await Promise.all([a.get(RetentionService).cleanup(), b.get(RetentionService).cleanup()]);
    const rest = await a.get(RetentionService).cleanup(); // whatever the losers of the lock left
    expect(deleted.reduce((sum, n) => sum + n, 0) + rest).toBe(doomed.length);

    const remaining = (await db.query(`SELECT id FROM durable.runs WHERE id = ANY($1)`, [[...doomed, ...kept]])).map((r) => r.id).sort();
    expect(remaining).toEqual([...kept].sort());
    for (const table of ['steps', 'signals', 'messages', 'history']) {
      expect(await db.count(table, 'run_id = ANY($1)', [doomed])).toBe(0);
      expect(await db.count(table, 'run_id = ANY($1)', [kept])).toBe(kept.length);
    }
    expect((await db.query(`SELECT id FROM durable.instances WHERE id LIKE 'stopped-%'`)).map((r) => r.id)).toEqual(['stopped-lately']);
    for (const run of live) await a.signals.signal(run.runId, 'finish', 'ok');
    for (const run of live) expect(await run.result({ timeout: '5s' })).toBe('ok');
  });

  it('a batch reads each status from its own age on: thousands of failed runs that a longer age keeps are never read', async () => {
    const runs = tablesFor(schema).runs;
    await db.query(
      `INSERT INTO ${runs} (id, workflow, status, input, created_at, finished_at)
       SELECT 'kept-failure-' || g, 'kept-busy', 'failed', 'null', now() - interval '60 days', now() - interval '10 days' FROM generate_series(1, 5000) g`,
    );
    for (let i = 0; i < 3; i++) await seed(`aged-completed-${i}`, 'completed', 8);
    await db.query(`ANALYZE ${runs}`);
    const day = 86_400_000;
    const [{ 'QUERY PLAN': plan }] = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${pickBatchSql(tablesFor(schema))}`,
      [7 * day, 30 * day, null, 7, [], []],
    );
    // Every row a scan of the runs table read, kept or not.
    const read = (node: PlanNode): number =>
      (node['Relation Name'] === 'runs' ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'] : 0) +
      (node.Plans ?? []).reduce((sum, child) => sum + read(child), 0);
    expect(read(plan[0].Plan)).toBeLessThan(100);
    expect(await a.get(RetentionService).cleanup()).toBe(3);
    await db.query(`DELETE FROM ${runs} WHERE id LIKE 'kept-failure-%'`);
  });

  it('a run another transaction holds is skipped, not taken for the end of the pass: the batches go on past it', async () => {
    await seed('held-oldest', 'completed', 10);
    const rest = Array.from({ length: 14 }, (_, i) => `held-behind-${i}`); // two batches of 7 after the held one
    for (const id of rest) await seed(id, 'completed', 8);
    const locker = new Client(databaseUrl());
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${schema}".runs WHERE id = 'held-oldest' FOR KEY SHARE`); // as a fork holds the child it reuses
      await a.get(RetentionService).cleanup();
      expect(await db.count('runs', 'id = ANY($1)', [rest])).toBe(0);
      expect(await db.count('runs', `id = 'held-oldest'`)).toBe(1);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await a.get(RetentionService).cleanup();
    expect(await db.count('runs', `id = 'held-oldest'`)).toBe(0);
  });

  it("a run started again under the id of a run deleted from today's or yesterday's partition starts with an empty journal, not the deleted run's", async () => {
    // A day's partitions go only once no run of it is left, so a deleted run's rows stay until then; a run
    // started again under its id on its day would get the same key and take its step results and signals.
    const [{ today, yesterday }] = await db.query<{ today: string; yesterday: string }>(
      `SELECT d::text AS today, (d - 1)::text AS yesterday FROM (SELECT timezone('UTC', now())::date AS d) t`,
    );
    await db.query(createJournalPartitionsSql(tablesFor(schema), -1, -1));
    await seed('reused-today', 'completed', 8, today);
    await seed('reused-yesterday', 'completed', 8, yesterday);
    await a.get(RetentionService).cleanup();
    for (const table of ['steps', 'signals', 'messages', 'history']) {
      expect(await db.count(table, 'run_id = ANY($1)', [['reused-today', 'reused-yesterday']])).toBe(0);
    }

    const again = await a.client.start(KeptBusy, null, { runId: 'reused-today' });
    await eventually(async () => (await a.client.getRun(again.runId)).status === 'waiting', 'the new run to wait for its signal');
    expect(await db.query(`SELECT result FROM durable.steps WHERE run_id = 'reused-today' AND key = 'work'`)).toEqual([
      { result: '"done"' },
    ]);
    await a.signals.signal(again.runId, 'finish', 'fresh');
    expect(await again.result({ timeout: '5s' })).toBe('fresh');
  });

  it("a run started again under the id of a deleted parent does not take the earlier run's child, kept by its own age, as its own", async () => {
    const other = uniqueSchema();
    const app = await startApp({
      schema: other,
      providers: [FailingChild, CatchingParent],
      options: { retention: { completed: '1ms', failed: '90d', intervalMs: 3_600_000 } },
    });
    const otherDb = new Db(other);
    try {
      const first = await app.client.start(CatchingParent, null, { runId: 'reused-parent' });
      expect(await first.result({ timeout: '5s' })).toBe('caught');
      await app.get(RetentionService).cleanup();
      expect(await otherDb.count('runs', 'id = $1', ['reused-parent'])).toBe(0);
      expect(await otherDb.count('runs', 'id = $1', ['reused-parent/ship'])).toBe(1); // failed: kept 90 days

      const again = await app.client.start(CatchingParent, null, { runId: 'reused-parent' });
      await expect(again.result({ timeout: '5s' })).rejects.toThrow(/is the child of an earlier run "reused-parent", deleted by retention/);
      expect(await otherDb.count('history', `run_id = 'reused-parent/ship' AND event = 'started'`)).toBe(1);
    } finally {
      await app.close();
      await otherDb.dropSchema();
    }
  });

  it("keeps a queued run while its queue's rate window still counts it (deleted, it made room for more starts within the period); an unqueued one, or one of a queue without a rate limit, goes", async () => {
    const other = uniqueSchema();
    const rated = await startApp({
      schema: other,
      providers: [RetentionChild],
      options: {
        queues: { rated: { concurrency: 5, rateLimit: { limit: 2, period: '1h' } }, unrated: { concurrency: 5 } },
        retention: { completed: '1ms', intervalMs: 3_600_000 },
      },
    });
    const otherDb = new Db(other);
    try {
      const queued = [
        await rated.client.start(RetentionChild, null, { queue: 'rated' }),
        await rated.client.start(RetentionChild, null, { queue: 'rated' }),
      ];
      const unqueued = await rated.client.start(RetentionChild, null);
      const unrated = await rated.client.start(RetentionChild, null, { queue: 'unrated' }); // no window keeps it
      for (const handle of [...queued, unqueued, unrated]) await handle.result({ timeout: '5s' });
      const third = await rated.client.start(RetentionChild, null, { queue: 'rated' });
      expect((await rated.client.getRun(third.runId)).status).toBe('pending'); // two began within the hour: the window is full
      await rated.get(RetentionService).cleanup();
      expect(await otherDb.count('runs', 'id = ANY($1)', [queued.map((h) => h.runId)])).toBe(2);
      expect(await otherDb.count('runs', 'id = ANY($1)', [[unqueued.runId, unrated.runId]])).toBe(0);
      expect((await rated.client.getRun(third.runId)).status).toBe('pending');
    } finally {
      await rated.close();
      await otherDb.dropSchema();
    }
  });

  it("never deletes a run whose parent is unfinished (or failed, so retryable): the parent reads its child's result later", async () => {
    const parent = await a.client.start(RetentionParent, null);
    const childId = `${parent.runId}/child`;
    const statuses = async () =>
      (await db.query(`SELECT string_agg(status, ',' ORDER BY id) AS s FROM durable.runs WHERE id IN ($1, $2)`, [parent.runId, childId]))[0]
        .s;
    await eventually(async () => (await statuses()) === 'waiting,completed', 'the child to end and the parent to wait');
    await db.query(`UPDATE durable.runs SET finished_at = now() - interval '8 days' WHERE id = $1`, [childId]);
    // A failed parent may be retried and read its children again: its children stay too.
    await seed('failed-parent', 'failed', 1);
    await seed('failed-parent/child', 'completed', 8);
    await seed('completed-parent', 'completed', 1);
    await seed('completed-parent/child', 'completed', 8);
    await db.query(
      `UPDATE durable.runs SET parent_id = split_part(id, '/', 1), parent_step = 'child' WHERE id IN ('failed-parent/child', 'completed-parent/child')`,
    );

    await a.get(RetentionService).cleanup();
    expect(
      (await db.query(`SELECT id FROM durable.runs WHERE id = ANY($1)`, [[childId, 'failed-parent/child', 'completed-parent/child']]))
        .map((r) => r.id)
        .sort(),
    ).toEqual([childId, 'failed-parent/child'].sort());
    await a.signals.signal(parent.runId, 'read', null);
    expect(await parent.result({ timeout: '5s' })).toBe('child-output');
  });

  it('never deletes a child that an unfinished fork of its parent reuses, though its parent is completed or gone; once the fork is done it goes', async () => {
    const source = await a.client.start(RetentionForkedParent, null);
    await eventually(async () => (await a.client.getRun(source.runId)).status === 'waiting', 'the source to wait');
    await a.signals.signal(source.runId, 'read', null);
    expect(await source.result({ timeout: '5s' })).toBe('child-output');
    const fork = await a.client.fork(source.runId, { fromStep: 'a' });
    await eventually(async () => (await a.client.getRun(fork.runId)).status === 'waiting', 'the fork to wait');
    const childId = `${source.runId}/child`;
    const age = () =>
      db.query(`UPDATE durable.runs SET finished_at = now() - interval '10 days' WHERE id = ANY($1)`, [[source.runId, childId]]);
    const left = async () =>
      (await db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE id = ANY($1)`, [[source.runId, childId]])).map((r) => r.id);

    await age();
    await a.get(RetentionService).cleanup();
    expect(await left()).toEqual([childId]); // the source went; the child its fork reads stays
    await a.signals.signal(fork.runId, 'read', null);
    expect(await fork.result({ timeout: '5s' })).toBe('child-output');

    await age();
    await a.get(RetentionService).cleanup();
    expect(await left()).toEqual([]);
  });

  it('keeps a fork of the source while a fork of that fork is unfinished: it is the link to the child the last fork reuses', async () => {
    const source = await a.client.start(RetentionForkedParent, null);
    await eventually(async () => (await a.client.getRun(source.runId)).status === 'waiting', 'the source to wait');
    await a.signals.signal(source.runId, 'read', null);
    await source.result({ timeout: '5s' });
    const first = await a.client.fork(source.runId, { fromStep: 'a' });
    await eventually(async () => (await a.client.getRun(first.runId)).status === 'waiting', 'the first fork to wait');
    await a.signals.signal(first.runId, 'read', null);
    await first.result({ timeout: '5s' });
    const second = await a.client.fork(first.runId, { fromStep: 'a' });
    await eventually(async () => (await a.client.getRun(second.runId)).status === 'waiting', 'the fork of the fork to wait');
    const childId = `${source.runId}/child`;
    const ended = [source.runId, childId, first.runId];
    await db.query(`UPDATE durable.runs SET finished_at = now() - interval '10 days' WHERE id = ANY($1)`, [ended]);
    // Cleanups one after the other: a first fork deleted by one would leave the child unreachable from its parent to the next.
    await a.get(RetentionService).cleanup();
    await a.get(RetentionService).cleanup();
    expect((await db.query(`SELECT id FROM durable.runs WHERE id = ANY($1) ORDER BY id`, [ended])).map((r) => r.id)).toEqual(
      [childId, first.runId].sort(),
    );
    await a.signals.signal(second.runId, 'read', null);
    expect(await second.result({ timeout: '5s' })).toBe('child-output');
  });

  it("a schedule's skipped slots go once older than the longest age retention keeps (here failed runs' 30 days)", async () => {
    await db.query(
      `INSERT INTO durable.schedule_skips (schedule, slot, reason, at)
       SELECT 'skippy', now() - d * interval '1 day', 'paused', now() - d * interval '1 day' FROM unnest(ARRAY[40, 31, 29, 1]) d`,
    );
    await a.get(RetentionService).cleanup();
    expect(
      (
        await db.query<{ days: number }>(
          `SELECT round(extract(epoch FROM now() - at) / 86400)::int AS days FROM durable.schedule_skips WHERE schedule = 'skippy' ORDER BY at`,
        )
      ).map((r) => r.days),
    ).toEqual([29, 1]);
  });

  it("a shutdown does not wait out a cleanup's backlog: the cleanup ends after its batch in flight, and the next pass goes on", async () => {
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, created_at, run_day, finished_at)
       SELECT 'backlog-' || n, 'kept-busy', 'completed', 'null', now() - interval '60 days', '1970-01-01', now() - interval '8 days'
       FROM generate_series(1, 3000) n`,
    );
    const closing = await startApp({
      schema,
      providers: [KeptBusy, RetentionParent, RetentionChild, RetentionForkedParent],
      options: { retention: { ...options.retention, batchSize: 1 } },
    });
    const cleaning = closing.get(RetentionService).cleanup();
    await eventually(async () => (await db.count('runs', `id LIKE 'backlog-%'`)) < 3000, 'a first batch deleted');
    await closing.close();
    await cleaning;
    expect(await db.count('runs', `id LIKE 'backlog-%'`)).toBeGreaterThan(0);
    await a.get(RetentionService).cleanup();
    expect(await db.count('runs', `id LIKE 'backlog-%'`)).toBe(0);
  });
});

describe('retention racing a fork that reuses a child: the fork keeps the child, or is refused', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let gate: StatementGate;
  let app: DurableTestApp;
  /** Retention's statement that picks the runs it deletes (and, in a transaction of its own since, locks them). */
  const picks = ['SKIP LOCKED', 'finished_at < now() - $1::bigint'];
  /** Retention's statement that deletes the runs it locked. */
  const deletes = ['WITH doomed AS', 'r.id = ANY($4::text[])'];

  beforeAll(async () => {
    gate = await StatementGate.open(db);
    app = await startApp({
      schema,
      providers: [RetentionForkedParent, RetentionChild],
      // Batches of two: a source and its child, picked together.
      options: { connection: gate.url, retention: { completed: '7d', batchSize: 2, intervalMs: 3_600_000 } },
    });
  });
  afterEach(() => gate.uninstall('runs'));
  afterAll(async () => {
    await app.close();
    await gate.close(); // the schema with the role: the instance made it as the role
  });

  /** A source that ended, with the child a fork from its step `a` reuses; those `aged` ended ten days ago. */
  const endedSource = async (aged: Array<'source' | 'child'>) => {
    const source = await app.client.start(RetentionForkedParent, null);
    await eventually(async () => (await app.client.getRun(source.runId)).status === 'waiting', 'the source to wait');
    await app.signals.signal(source.runId, 'read', null);
    expect(await source.result({ timeout: '5s' })).toBe('child-output');
    const child = `${source.runId}/child`;
    const ids = { source: source.runId, child };
    await db.query(`UPDATE durable.runs SET finished_at = now() - interval '10 days' WHERE id = ANY($1)`, [aged.map((run) => ids[run])]);
    return { source: source.runId, child };
  };

  /** Waits until the fork waits on a row lock, or has settled (a fork that does not wait lands at once; the checks after tell it). */
  const lockWaitOrSettled = async (forking: Promise<unknown>): Promise<boolean> => {
    let settled = false;
    void forking.then(
      () => (settled = true),
      () => (settled = true),
    );
    return eventually(
      async () =>
        settled ||
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH src_ended AS%' AND query LIKE $1`,
            [`%${schema}%`],
          )
        ).length > 0,
      'the fork waiting on a row lock, or settled',
    ).then(() => settled);
  };

  it('a fork committed while retention picks its runs (after its snapshot, before its locks) keeps the child; the fork reads it; the cleanup goes on to the next batch', async () => {
    await gate.install('runs', picks);
    const { source, child } = await endedSource(['source', 'child']);
    // A third run to delete, in the next batch: the first deletes fewer runs than it picked, and is not the last.
    const next = `${source}-next`;
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, finished_at) VALUES ($1, 'retention-child', 'completed', 'null', now() - interval '8 days')`,
      [next],
    );
    await gate.hold();
    const cleanup = app.get(RetentionService).cleanup();
    const fork = await gate
      .held('retention held while it picks its runs')
      .then(() => app.client.fork(source, { fromStep: 'a' }))
      .finally(() => gate.release());
    await cleanup;
    expect((await db.query(`SELECT id FROM durable.runs WHERE id = ANY($1)`, [[source, child, next]])).map((r) => r.id)).toEqual([child]);
    await eventually(async () => (await app.client.getRun(fork.runId)).status === 'waiting', 'the fork to wait');
    await app.signals.signal(fork.runId, 'read', null);
    expect(await fork.result({ timeout: '5s' })).toBe('child-output');
  });

  it('a fork while retention deletes the child (its rows locked) waits for it, then is refused naming the child; nothing is created', async () => {
    await gate.install('runs', deletes);
    const { source, child } = await endedSource(['child']); // (a source it deletes too: the fork finds no source)
    await gate.hold();
    const cleanup = app.get(RetentionService).cleanup();
    // The fork is asked while retention holds the child's row, and waits for it (the lock on the row, not the gate).
    const { forking } = await gate
      .held('retention held while it deletes its runs')
      .then(async () => {
        const forking = app.client.fork(source, { fromStep: 'a', runId: `${source}-fork` }).catch((error: Error) => error);
        await lockWaitOrSettled(forking);
        return { forking };
      })
      .finally(() => gate.release());
    await cleanup;
    const refused = await forking;
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain(`its child "${child}" (child:child)`);
    expect(await db.count('runs', 'id = ANY($1)', [[child, `${source}-fork`]])).toBe(0);
  });

  it("a fork of a source still going does not wait for a transaction that holds the source's row (a delivery in the application's transaction)", async () => {
    const source = await app.client.start(RetentionForkedParent, null);
    await eventually(async () => (await app.client.getRun(source.runId)).status === 'waiting', 'the source to wait');
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      await holder.query('BEGIN');
      // The row held as a delivery in the application's transaction (TxOptions.manager) holds it.
      await holder.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [source.runId]);
      const forking = app.client.fork(source.runId, { fromStep: 'a' });
      expect(await lockWaitOrSettled(forking)).toBe(true); // settled, not waiting on the lock
      const fork = await forking;
      await app.signals.signal(fork.runId, 'read', null);
      expect(await fork.result({ timeout: '5s' })).toBe('child-output');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    await app.signals.signal(source.runId, 'read', null);
    expect(await source.result({ timeout: '5s' })).toBe('child-output');
  });

  it('a fork of a fork that retention is deleting waits for it, then finds no run; nothing is created', async () => {
    await gate.install('runs', deletes);
    const { source } = await endedSource([]);
    const first = await app.client.fork(source, { fromStep: 'a' });
    await eventually(async () => (await app.client.getRun(first.runId)).status === 'waiting', 'the fork to wait');
    await app.signals.signal(first.runId, 'read', null);
    await first.result({ timeout: '5s' });
    await db.query(`UPDATE durable.runs SET finished_at = now() - interval '10 days' WHERE id = $1`, [first.runId]);
    await gate.hold();
    const cleanup = app.get(RetentionService).cleanup();
    const { forking } = await gate
      .held('retention held while it deletes the first fork')
      .then(async () => {
        const forking = app.client.fork(first.runId, { fromStep: 'a', runId: `${first.runId}-fork` }).catch((error: Error) => error);
        await lockWaitOrSettled(forking);
        return { forking };
      })
      .finally(() => gate.release());
    await cleanup;
    expect(await forking).toBeInstanceOf(RunNotFoundError);
    expect(await db.count('runs', 'id = ANY($1)', [[first.runId, `${first.runId}-fork`]])).toBe(0);
  });
});

/** A node of EXPLAIN's JSON plan, as much of it as the tests read. */
interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}
