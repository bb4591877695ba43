import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { DurableWorkflow, RunConflictError, Step, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { BatchSender, GroupCommit, groupCommitOn, Rows } from 'nestjs-durable/persistence/group-commit';
import { CheckpointResult, JournalRepository, StoredStep } from 'nestjs-durable/persistence/journal.repository';
import { RunEndRepository } from 'nestjs-durable/persistence/run-end.repository';
import { ClaimedRun, RunRepository, StartRunArgs } from 'nestjs-durable/persistence/run.repository';
import { startClaimedRunSql } from 'nestjs-durable/persistence/sql/start-run.sql';
import { queueChannel } from 'nestjs-durable/durable.constants';
import { Client } from 'pg';
import { databaseUrl, DurableTestApp, eventually, fileApps, uniqueSchema } from '../setup/durable-app';

const ok = (result: unknown): StoredStep => ({ outcome: 'ok', result: JSON.stringify(result), error: null });

/** How a test group sends a batch of several kinds: each statement through its kind's `send`, as `together` answers them. */
const sender: BatchSender = async (statements) => ({
  rows: await Promise.all(
    statements.map((s) => (s.sql === 'fail' ? Promise.reject(new Error('refused')) : sends.get(s.sql)!(s.params as number[]))),
  ),
  sent: { retried: false, sentAt: Date.now() },
});
const sends = new Map<string, (items: number[]) => Promise<Rows>>();

/** A kind of write whose lone and batch statements are one `send`, so a test sees every statement as the items it carried. */
const kindOf = (group: GroupCommit, name: string, send: (items: number[], alone: boolean) => Promise<number[]>) => {
  sends.set(name, async (items) => (await send(items, false)).map((v) => ({ v })));
  return group.kind<number, number>({
    one: (item) => send([item], true).then(([result]) => result),
    batch: (items) => ({ sql: items.includes(-1) ? 'fail' : name, params: items, answer: (rows) => rows.map((r) => r.v as number) }),
  });
};

describe('group commit: how writes are grouped', () => {
  /** A send that answers when told to, recording each batch. */
  const harness = (policy = { maxInFlight: 1, maxBatch: 3 }) => {
    const batches: number[][] = [];
    const answers: Array<(failure?: Error) => void> = [];
    const group = new GroupCommit(sender, policy);
    const submit = kindOf(
      group,
      'numbers',
      (items) =>
        new Promise((resolve, reject) => {
          batches.push(items);
          answers.push((failure) => (failure ? reject(failure) : resolve(items.map((i) => i * 10))));
        }),
    );
    return { submit, batches, answer: (n: number, failure?: Error) => answers[n](failure) };
  };

  it('sends a lone write at once, and the writes that came meanwhile together when it returns, each with its own answer', async () => {
    const { submit, batches, answer } = harness();
    const first = submit(1);
    expect(batches).toEqual([[1]]); // no timer, no wait for company
    const rest = [2, 3, 4, 5].map((i) => submit(i));
    expect(batches).toEqual([[1]]); // one batch in flight at a time
    answer(0);
    expect(await first).toBe(10);
    await eventually(async () => batches.length === 2, 'the second batch');
    expect(batches[1]).toEqual([2, 3, 4]); // at most maxBatch
    answer(1);
    await eventually(async () => batches.length === 3, 'the third batch');
    expect(batches[2]).toEqual([5]);
    answer(2);
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50]);
  });

  it('the writes of the executions a batch answered join the writes waiting behind it, however deep their code', async () => {
    const { submit, batches, answer } = harness({ maxInFlight: 1, maxBatch: 10 });
    /** An execution: writes, then goes on through `hops` awaits (a step's wrappers) and writes again. */
    const execution = async (id: number, hops: number) => {
      await submit(id);
      for (let i = 0; i < hops; i++) await Promise.resolve();
      return submit(id + 100);
    };
    const first = execution(1, 50);
    const waiting = [submit(2), submit(3)];
    expect(batches).toEqual([[1]]);
    answer(0);
    await eventually(async () => batches.length === 2, 'the second batch');
    expect(batches[1]).toEqual([2, 3, 101]); // not [2, 3] and then [101] a round trip later
    answer(1);
    expect(await Promise.all([first, ...waiting])).toEqual([1010, 20, 30]);
  });

  it("a lone caller's next write leaves at once, in the same turn of the event loop as its answer", async () => {
    const { submit, batches, answer } = harness({ maxInFlight: 1, maxBatch: 10 });
    let sentWithAnswer: number[][] = [];
    const lone = (async () => {
      await submit(1);
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const next = submit(2);
      sentWithAnswer = batches.map((b) => [...b]); // read before any other turn of the event loop can run
      return next;
    })();
    answer(0);
    await eventually(async () => batches.length === 2, 'the second write');
    expect(sentWithAnswer).toEqual([[1], [2]]);
    answer(1);
    expect(await lone).toBe(20);
  });

  it('a batch refused whole is sent again one write at a time, so only the write that cannot land fails', async () => {
    const sent: number[][] = [];
    const group = new GroupCommit(sender, { maxInFlight: 1, maxBatch: 10 });
    const submit = kindOf(group, 'refusing', async (items) => {
      sent.push(items);
      if (items.includes(3)) throw new Error('refused');
      return items.map((i) => i * 10);
    });
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => submit(i)));
    expect(sent).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'refused'))).toEqual([10, 20, 'refused', 40]);
  });

  it('a failed batch fails only its own writes', async () => {
    const { submit, batches, answer } = harness({ maxInFlight: 2, maxBatch: 10 });
    const a = submit(1);
    const b = submit(2);
    expect(batches).toEqual([[1], [2]]); // two in flight: both leave at once
    answer(0, new Error('refused'));
    answer(1);
    await expect(a).rejects.toThrow('refused');
    expect(await b).toBe(20);
  });

  it('writes of every kind that came meanwhile go out in one send, each kind as its batch; refused, each write goes again alone', async () => {
    const sent: Array<[string, number[]]> = [];
    const group = new GroupCommit(
      async (statements) => {
        sent.push(...statements.map((s): [string, number[]] => [s.sql, s.params as number[]]));
        return sender(statements);
      },
      { maxInFlight: 1, maxBatch: 10 },
    );
    const alone: Array<[string, number[]]> = [];
    const kind = (name: string, times: number) =>
      kindOf(group, name, async (items, lone) => {
        if (lone) alone.push([name, items]);
        return items.map((i) => i * times);
      });
    const [tens, hundreds] = [kind('tens', 10), kind('hundreds', 100)];
    const first = tens(1); // alone: nothing in flight
    const together = [tens(2), hundreds(3), tens(4), hundreds(5)];
    expect(await first).toBe(10);
    expect(await Promise.all(together)).toEqual([20, 300, 40, 500]);
    expect(sent).toEqual([
      ['tens', [2, 4]],
      ['hundreds', [3, 5]],
    ]);
    // A send that fails (one kind's statement refused, so the transaction with it): every write of it goes again alone.
    alone.length = 0;
    sent.length = 0;
    // The batch before has left the wire: it held several writes, so its slot is given back a turn of the event loop
    // after its answers settle, in the check phase after this test's first turn.
    await new Promise(setImmediate);
    await new Promise(setImmediate);
    const blocker = tens(6);
    const refused = [tens(-1), hundreds(7)];
    await blocker;
    expect(await Promise.all(refused)).toEqual([-10, 700]);
    expect(sent).toEqual([
      ['fail', [-1]],
      ['hundreds', [7]],
    ]);
    expect(alone).toEqual([
      ['tens', [6]],
      ['tens', [-1]],
      ['hundreds', [7]],
    ]);
  });
});

@Workflow('three-steps')
class ThreeSteps implements DurableWorkflow<number, number> {
  static executed = 0;
  async run(n: number) {
    return this.c(await this.b(await this.a(n)));
  }
  @Step() async a(n: number) {
    ThreeSteps.executed++;
    return n + 1;
  }
  @Step() async b(n: number) {
    ThreeSteps.executed++;
    return n + 1;
  }
  @Step() async c(n: number) {
    ThreeSteps.executed++;
    return n + 1;
  }
}

@Workflow('awaits-go')
class AwaitsGo implements DurableWorkflow<null, string> {
  run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal<string>('go');
  }
}

@Workflow('one-step')
class OneStep implements DurableWorkflow<number, number> {
  async run(n: number) {
    return this.a(n);
  }
  @Step() async a(n: number) {
    return n;
  }
}

describe('group commit of checkpoints, ends and starts (real Postgres)', () => {
  const schema = uniqueSchema();
  const registry = new Registry();
  const { db, boot } = fileApps({
    schema,
    providers: [ThreeSteps, OneStep, AwaitsGo],
    // Waits park at once, so that a delivery claims the run (AwaitsGo).
    options: { worker: { concurrency: 40 }, metrics: { registry }, inlineWaitMs: 0 },
  });
  let app: DurableTestApp;
  let database: DurableDatabase;
  /** Runs `ids` leased under token 1, as a worker holding them would have them. */
  const leased = async (ids: string[]) =>
    db.query(`INSERT INTO durable.runs (id, workflow, status, lease_token) SELECT unnest($1::text[]), 'w', 'running', 1`, [ids]);
  /** A journal whose batches are recorded, with a lone write in flight first so the next ones queue behind it. */
  const journal = () => {
    const sizes: number[] = [];
    return {
      repository: new JournalRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }), (n) => sizes.push(n)),
      sizes,
    };
  };
  const id = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;
  /** The session of a batch statement of this schema once it waits on a lock. */
  const batchWaitingOnLock = (what: string) =>
    eventually(async () => {
      const [row] = await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%jsonb_to_recordset%' AND query LIKE $1`,
        [`%"${schema}"%`],
      );
      return row;
    }, what);

  beforeAll(async () => {
    app = await boot();
    database = app.get(DurableDatabase);
  });

  it('commits concurrent executions together: 40 runs of 3 steps in fewer statements than checkpoints, each step once (the last with its end)', async () => {
    ThreeSteps.executed = 0;
    const handles = await Promise.all(Array.from({ length: 40 }, (_, n) => app.client.start(ThreeSteps, n)));
    expect(await Promise.all(handles.map((h) => h.result()))).toEqual(Array.from({ length: 40 }, (_, n) => n + 3));
    expect(ThreeSteps.executed).toBe(120);
    expect(await db.count('steps')).toBe(120);
    const { values } = await registry.getSingleMetric('durable_checkpoint_batch_size')!.get();
    const figure = (name: string) => values.find((v) => (v as { metricName?: string }).metricName === name)!.value;
    const [sum, count] = [figure('durable_checkpoint_batch_size_sum'), figure('durable_checkpoint_batch_size_count')];
    expect(sum).toBe(80); // the third step's checkpoint rides with its run's end
    expect(count).toBeLessThan(80);
  });

  it('fences each row by its own token: a stale one is refused while the rest of its batch lands', async () => {
    const runs = Array.from({ length: 10 }, () => id('fence'));
    await leased(runs);
    const { repository, sizes } = journal();
    const results = await Promise.all(runs.map((run, n) => repository.checkpoint(run, n === 4 ? '2' : '1', 'step', 'step', ok(n), null)));
    expect(sizes).toEqual([1, 9]);
    expect(results.map((r) => r.status)).toEqual(['written', 'written', 'written', 'written', 'lost', ...Array(5).fill('written')]);
    expect(await db.count('steps', 'run_id = ANY($1)', [runs])).toBe(9);
  });

  it('keeps the first writer of a key: a second write of it in the same batch reads the first one back', async () => {
    const [lone, run] = [id('lone'), id('twice')];
    await leased([lone, run]);
    const { repository, sizes } = journal();
    const results = await Promise.all([
      repository.checkpoint(lone, '1', 'step', 'step', ok('lone'), null),
      repository.checkpoint(run, '1', 'step', 'step', ok('first'), null),
      repository.checkpoint(run, '1', 'step', 'step', ok('second'), null),
    ]);
    expect(sizes).toEqual([1, 2]);
    expect(results).toEqual<CheckpointResult[]>([{ status: 'written' }, { status: 'written' }, { status: 'exists', step: ok('first') }]);
  });

  it('a batch carries any text exactly: quotes, backslashes, a trailing backslash, dollars, non-ASCII', async () => {
    const texts = [
      "it's",
      "''",
      'C:\\dir\\file',
      'ends with \\',
      "\\'",
      "E'x'",
      '$1 $$ $tag$',
      "'); DROP TABLE x; --",
      'ü → ✓ 😀',
      '\\\\n\n\t',
    ];
    // A statement each (a batch holds a statement per kind), its parameters written into its EXECUTE.
    const echo = (text: string, n: number) => ({
      sql: `SELECT ${n} AS n, $1::text AS text, $2::jsonb AS json`,
      params: [text, JSON.stringify({ text })],
    });
    const rows = await database.together(texts.map(echo));
    expect(rows).toEqual(texts.map((text, n) => [{ n, text, json: { text } }]));
  });

  it('a row Postgres refuses fails only its own write: the batch is split and the others land', async () => {
    const runs = Array.from({ length: 6 }, () => id('split'));
    await leased(runs);
    const { repository, sizes } = journal();
    // A key past the btree's row limit (random, so it does not compress): Postgres refuses the whole statement.
    const huge = randomBytes(6_000).toString('hex');
    const results = await Promise.allSettled(
      runs.map((run, n) => repository.checkpoint(run, '1', n === 3 ? huge : 'step', 'step', ok(n), null)),
    );
    expect(sizes).toEqual([1, 5]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((results[3] as PromiseRejectedResult).reason)).toMatch(/index row/);
    expect(await db.count('steps', 'run_id = ANY($1)', [runs])).toBe(5);
  });

  it('journals concurrent timers together: each instant from the batch clock, a stale token refused, a key twice or stored answered with the first instant', async () => {
    const runs = Array.from({ length: 4 }, () => id('timer'));
    await leased(runs);
    await db.query(
      `INSERT INTO durable.steps (run_id, run_day, key, kind, outcome, result)
       SELECT id, run_day, 'sleep:stored', 'timer', 'ok', $2 FROM durable.runs WHERE id = $1`,
      [runs[3], JSON.stringify({ $t: 'Date', v: '2030-01-01T00:00:00.000Z' })],
    );
    const { repository, sizes } = journal();
    const results = await Promise.all([
      repository.timer(runs[0], '1', 'sleep:lone', 'timer', 1_000),
      repository.timer(runs[1], '1', 'sleep:a', 'timer', 60_000),
      repository.timer(runs[2], '2', 'sleep:a', 'timer', 60_000),
      repository.timer(runs[1], '1', 'sleep:b', 'timer', 5_000),
      repository.timer(runs[1], '1', 'sleep:b', 'timer', 9_000),
      repository.timer(runs[3], '1', 'sleep:stored', 'timer', 1),
    ]);
    expect(sizes).toEqual([1, 5]);
    expect(results[2]).toBeUndefined();
    const until = (n: number) => new Date((JSON.parse(results[n]!.until) as { v: string }).v).getTime();
    // One statement, one now(): each instant its ms after it. The clock read with them (clock_timestamp(),
    // for DbClock) is as the statement ran: at that now() or after, never before.
    const base = until(1) - 60_000;
    expect([until(3), until(4)]).toEqual([base + 5_000, base + 5_000]);
    for (const n of [1, 3, 4]) expect(results[n]!.dbNow.getTime()).toBeGreaterThanOrEqual(base);
    expect(results[5]!.until).toBe(JSON.stringify({ $t: 'Date', v: '2030-01-01T00:00:00.000Z' }));
    // Alone (timerSql), a stored key answers its instant too.
    expect((await repository.timer(runs[3], '1', 'sleep:stored', 'timer', 1))!.until).toBe(results[5]!.until);
    expect(await db.count('steps', `run_id = ANY($1) AND kind = 'timer'`, [runs])).toBe(4);
  });

  it('a session cut in the middle of a batch: the batch is tried again whole and every row lands once', async () => {
    const runs = Array.from({ length: 8 }, () => id('cut'));
    await leased(runs);
    const { repository, sizes } = journal();
    // Another session holds the last run's row, so the batch's FOR SHARE waits on it, mid-statement.
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [runs[7]]);
      const written = Promise.all(runs.map((run, n) => repository.checkpoint(run, '1', 'step', 'step', ok(n), null)));
      const blocked = await batchWaitingOnLock('the batch waiting on the held row');
      await db.query('SELECT pg_terminate_backend($1)', [blocked.pid]);
      await holder.query('COMMIT');
      expect((await written).map((r) => r.status)).toEqual(Array(8).fill('written'));
    } finally {
      await holder.end();
    }
    expect(sizes.slice(0, 2)).toEqual([1, 7]);
    expect(await db.count('steps', 'run_id = ANY($1)', [runs])).toBe(8);
  });

  it('ends runs together: each fenced by its own token, with its history row, and a parent parked on a child woken', async () => {
    const parent = id('parent');
    const runs = Array.from({ length: 6 }, () => id('end'));
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, wait_kind, wait, wake_at) VALUES ($1, 'w', 'waiting', 'child', '{"kind":"child"}', now() + interval '1 hour')`,
      [parent],
    );
    await leased(runs);
    await db.query(`UPDATE durable.runs SET parent_id = $1 WHERE id = ANY($2)`, [parent, runs.slice(4)]);
    const ends = new RunEndRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }));
    const end = (run: string, token: string) =>
      ends.finish({ id: run, leaseToken: token } as ClaimedRun, 'completed', JSON.stringify(run), null, 'test');
    const results = await Promise.all(runs.map((run, n) => end(run, n === 1 ? '2' : '1')));
    expect(results).toEqual([true, false, true, true, true, true]);
    const rows = await db.query<{ id: string; status: string; output: string | null }>(
      `SELECT id, status, output FROM durable.runs WHERE id = ANY($1) ORDER BY array_position($1, id)`,
      [runs],
    );
    expect(rows.map((r) => r.status)).toEqual(['completed', 'running', 'completed', 'completed', 'completed', 'completed']);
    expect(rows[0].output).toBe(JSON.stringify(runs[0]));
    expect(await db.count('history', `run_id = ANY($1) AND event = 'completed'`, [runs])).toBe(5);
    const [woken] = await db.query<{ due: boolean }>(`SELECT wake_at <= now() AS due FROM durable.runs WHERE id = $1`, [parent]);
    expect(woken.due).toBe(true);
    // A try after one that committed (its answer lost) answers as that one did and writes nothing twice.
    expect(await Promise.all([end(runs[2], '1'), end(runs[3], '1')])).toEqual([true, true]);
    expect(await db.count('history', `run_id = ANY($1) AND event = 'completed'`, [runs])).toBe(5);
  });

  it("answers two ends of one run in a batch by their tokens: the stale execution's is refused, the current one's taken", async () => {
    const [first, run] = [id('end-first'), id('end-twice')];
    await leased([first, run]);
    await db.query(`UPDATE durable.runs SET lease_token = 2 WHERE id = $1`, [run]); // taken over: token 2 is current
    const ends = new RunEndRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }));
    const end = (id: string, token: string) =>
      ends.finish({ id, leaseToken: token } as ClaimedRun, 'completed', JSON.stringify(token), null, 'test');
    // The first goes alone; the two ends of `run` queue behind it and go in one batch.
    const results = await Promise.all([end(first, '1'), end(run, '1'), end(run, '2')]);
    expect(results).toEqual([true, false, true]); // before: the stale end was answered as ended, by the run's id
    const [row] = await db.query<{ output: string }>(`SELECT output FROM durable.runs WHERE id = $1`, [run]);
    expect(row.output).toBe(JSON.stringify('2'));
  });

  it('ends a run without parent or queue through the lean statements, alone and batched: fenced, with its history row, answered again after a lost answer', async () => {
    const [alone, ...batched] = Array.from({ length: 4 }, () => id('lean'));
    const [parent, child, waiter, late] = [id('parent'), id('child'), id('waiter'), id('late')];
    await leased([alone, ...batched, child, late]);
    const parked = `INSERT INTO durable.runs (id, workflow, status, wait_kind, wait_name, wait, wake_at)
                    VALUES ($1, 'w', 'waiting', 'child', $2, '{"kind":"child"}', now() + interval '1 hour')`;
    await db.query(parked, [parent, child]);
    // Parked on the result of a run it did not start (a fork reusing its source's child): woken by the lean end too.
    await db.query(parked, [waiter, alone]);
    await db.query(`UPDATE durable.runs SET parent_id = $1 WHERE id = $2`, [parent, child]);
    await db.query(`UPDATE durable.runs SET deadline = now() + interval '1 hour' WHERE id = $1`, [late]);
    const end = (ends: RunEndRepository, run: string, token: string, lean = true) =>
      ends.finish(
        { id: run, leaseToken: token, parentless: lean, unqueued: lean } as ClaimedRun,
        'completed',
        JSON.stringify(run),
        null,
        'test',
      );
    const due = async (run: string) =>
      (await db.query<{ due: boolean }>(`SELECT wake_at <= now() AS due FROM durable.runs WHERE id = $1`, [run]))[0].due;
    const lone = new RunEndRepository(database, groupCommitOn(database, false));
    expect(await end(lone, alone, '2')).toBe(false);
    expect(await end(lone, alone, '1')).toBe(true);
    expect(await end(lone, alone, '1')).toBe(true); // the retry of a try whose answer was lost
    expect(await due(waiter)).toBe(true);
    // The grace's end, before the deadline: not ended.
    expect(
      await lone.finish({ id: late, leaseToken: '1', parentless: true, unqueued: true } as ClaimedRun, 'failed', null, null, 'test', 0),
    ).toBe(false);
    // A run with a parent, marked parentless by mistake: the lean end leaves it running (its lease lapses; a claim reads its
    // row, and its end then wakes the parent).
    expect(await end(lone, child, '1')).toBe(false);
    expect(await due(parent)).toBe(false);
    const grouped = new RunEndRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }));
    // The first goes alone; the two behind it are one batch of lean ends; the last batch mixes in the child, so it wakes the parent.
    expect(await Promise.all([end(grouped, batched[0], '1'), end(grouped, batched[1], '7'), end(grouped, batched[2], '1')])).toEqual([
      true,
      false,
      true,
    ]);
    expect(await Promise.all([end(grouped, batched[0], '1'), end(grouped, child, '1', false), end(grouped, batched[2], '1')])).toEqual([
      true,
      true,
      true,
    ]);
    expect(await db.count('runs', `id = ANY($1) AND status = 'completed'`, [[alone, ...batched, child, late]])).toBe(4);
    expect(await db.count('history', `run_id = ANY($1) AND event = 'completed'`, [[alone, ...batched, child, late]])).toBe(4);
    expect(await due(parent)).toBe(true);
  });

  it("ends queued runs without a parent through the statements without the parent's part, alone and batched: their slots are given back; one with a parent said parentless is not ended", async () => {
    const [lead, queued, child] = [id('queued-lead'), id('queued'), id('queued-child')];
    const queue = id('queue');
    await leased([lead, queued, child]);
    await db.query(`UPDATE durable.runs SET queue = $1 WHERE id = ANY($2)`, [queue, [lead, queued, child]]);
    await db.query(`UPDATE durable.runs SET parent_id = 'a-parent' WHERE id = $1`, [child]);
    await db.query(`INSERT INTO durable.queue_slots (queue, slot, holder) VALUES ($1, 1, $2), ($1, 2, $3), ($1, 3, $4)`, [
      queue,
      lead,
      queued,
      child,
    ]);
    const grouped = new RunEndRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }));
    const end = (run: string, parentless = true) =>
      grouped.finish({ id: run, leaseToken: '1', parentless, unqueued: false } as ClaimedRun, 'completed', '1', null, 'test');
    // The lead goes alone; the two behind it are one batch, in which the child, wrongly said parentless, is left running.
    expect(await Promise.all([end(lead), end(queued), end(child)])).toEqual([true, true, false]);
    const holders = () =>
      db.query<{ holder: string | null }>(`SELECT holder FROM durable.queue_slots WHERE queue = $1 ORDER BY slot`, [queue]);
    expect(await holders()).toEqual([{ holder: null }, { holder: null }, { holder: child }]);
    expect(await db.count('runs', `id = ANY($1) AND status = 'completed'`, [[lead, queued]])).toBe(2);
    // Said what it is, the child ends and gives its slot back.
    expect(await end(child, false)).toBe(true);
    expect(await holders()).toEqual([{ holder: null }, { holder: null }, { holder: null }]);
  });

  it('a claim says which runs have no parent and which no queue, so their ends leave those parts out', async () => {
    const [plainRun, child, queued] = [id('plain'), id('child'), id('queued')];
    const workflow = id('claimed-workflow');
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, wake_at, parent_id, queue)
       VALUES ($1, $4, 'pending', now(), NULL, NULL), ($2, $4, 'pending', now(), 'a-parent', NULL), ($3, $4, 'running', now(), NULL, 'a-queue')`,
      [plainRun, child, queued, workflow],
    );
    const claimed = await new RunRepository(database, groupCommitOn(database, false)).claim('test', 60_000, 10, [workflow]);
    expect(Object.fromEntries(claimed.map((run) => [run.id, [run.parentless, run.unqueued]]))).toEqual({
      [plainRun]: [true, true],
      [child]: [false, true],
      [queued]: [true, false],
    });
  });

  it('a delivery that claims a parked run says it has no parent and no queue, so its end leaves those parts out', async () => {
    const handle = await app.client.start(AwaitsGo, null);
    await eventually(async () => (await app.client.getRun(handle.runId)).status === 'waiting', 'the run to park');
    const ended = jest.spyOn(app.get(RunEndRepository), 'finish'); // watched, not replaced
    try {
      await app.signals.signal(handle.runId, 'go', 'now');
      expect(await handle.result()).toBe('now');
      expect(ended.mock.calls.map(([run]) => [run.id, run.parentless, run.unqueued])).toEqual([[handle.runId, true, true]]);
    } finally {
      ended.mockRestore();
    }
  });

  it('ends a run whose row a lease renewal changed while its batch waited for it', async () => {
    // The batch's snapshot predates the renewal's commit; the row version it locks is the renewal's,
    // and the end must land on that version (an update addressed to a version the snapshot cannot see
    // changed nothing, and the run was left running with nobody renewing its lease).
    const runs = Array.from({ length: 4 }, () => id('renewed'));
    await leased(runs);
    const ends = new RunEndRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }));
    const renewal = new Client(databaseUrl());
    await renewal.connect();
    try {
      await renewal.query('BEGIN');
      await renewal.query(`UPDATE "${schema}".runs SET wake_at = now() + interval '1 minute' WHERE id = $1`, [runs[3]]);
      const ended = Promise.all(runs.map((run) => ends.finish({ id: run, leaseToken: '1' } as ClaimedRun, 'completed', '1', null, 'test')));
      await batchWaitingOnLock('the batch waiting on the renewed row');
      await renewal.query('COMMIT');
      expect(await ended).toEqual([true, true, true, true]);
    } finally {
      await renewal.end();
    }
    expect(await db.count('runs', `id = ANY($1) AND status = 'completed'`, [runs])).toBe(4);
    expect(await db.count('history', `run_id = ANY($1) AND event = 'completed'`, [runs])).toBe(4);
  });

  describe('starts', () => {
    /** A runs repository whose start batches are recorded. */
    const starter = () => {
      const sizes: number[] = [];
      const repository = new RunRepository(database, groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 }));
      repository.observeStartBatches = (n) => sizes.push(n);
      return { repository, sizes };
    };
    const plain = (runId: string, workflow = 'three-steps'): StartRunArgs => ({
      id: runId,
      workflow,
      input: '1',
      claimBy: 'elsewhere',
      leaseMs: 60_000,
      actor: 'test',
      traceContext: null,
    });
    /** A start of `queue`, whose concurrency is `slots`, as a queue without partitions or a rate limit sends it. */
    const queued =
      (queue: string, slots: number | null) =>
      (runId: string): StartRunArgs => ({
        ...plain(runId),
        placement: { queue, partitionKey: null, priority: 100, deduplicationId: null, debounce: null },
        queueConcurrency: slots,
        limits: { timeoutMs: 60_000 },
      });
    /** The starts of a kind: plain, or of a new queue of 10 slots (made as a worker's boot makes them). */
    const startsOf = async (kind: 'plain' | 'queued') => {
      if (kind === 'plain') return plain;
      const queue = id('queue');
      await db.query(`INSERT INTO durable.queue_slots (queue, slot) SELECT $1, generate_series(1, 10)`, [queue]);
      return queued(queue, 10);
    };
    /** A transaction left open after inserting `runId`: a start of that id waits for it to end. */
    const inserting = async (runId: string) => {
      const holder = new Client(databaseUrl());
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO "${schema}".runs (id, workflow, status) VALUES ($1, 'w', 'pending')`, [runId]);
      return holder;
    };
    /** The transactions that wrote these runs' `started` rows. */
    const startCommits = async (runs: string[]) =>
      (
        await db.query<{ n: number }>(
          `SELECT count(DISTINCT xmin::text)::int AS n FROM durable.history WHERE event = 'started' AND run_id = ANY($1)`,
          [runs],
        )
      )[0].n;

    it('go out together when this instance executes them: 30 runs in fewer commits, each started once with its deadline and keys', async () => {
      ThreeSteps.executed = 0;
      const handles = await Promise.all(
        Array.from({ length: 30 }, (_, n) => app.client.start(ThreeSteps, n, { timeout: '1h', keys: { order: `o-${n}` } })),
      );
      const runs = handles.map((h) => h.runId);
      expect(await Promise.all(handles.map((h) => h.result()))).toEqual(Array.from({ length: 30 }, (_, n) => n + 3));
      expect(ThreeSteps.executed).toBe(90);
      expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [runs])).toBe(30);
      expect(await startCommits(runs)).toBeLessThan(30);
      const rows = await db.query<{ keys: Record<string, string>; hour: boolean; detail: { timeoutMs: number } }>(
        `SELECT r.keys, r.deadline BETWEEN r.created_at + interval '59 minutes' AND r.created_at + interval '61 minutes' AS hour, h.detail
         FROM durable.runs r JOIN durable.history h ON h.run_id = r.id AND h.event = 'started' WHERE r.id = ANY($1) ORDER BY array_position($1, r.id)`,
        [runs],
      );
      expect(rows.map((r) => r.keys.order)).toEqual(Array.from({ length: 30 }, (_, n) => `o-${n}`));
      expect(rows.every((r) => r.hour && r.detail.timeoutMs === 3_600_000)).toBe(true);
      const { values } = await registry.getSingleMetric('durable_start_batch_size')!.get();
      expect(values.find((v) => (v as { metricName?: string }).metricName === 'durable_start_batch_size_count')!.value).toBeLessThan(
        values.find((v) => (v as { metricName?: string }).metricName === 'durable_start_batch_size_sum')!.value,
      );
    });

    it('a start batch that committed but failed after (its answer lost, its next try refused): each start sent again alone claims its own run back', async () => {
      // The batch's send commits, then fails as a try whose answer was lost followed by a refusal would.
      const group = new GroupCommit(
        async (statements) => {
          await database.together(statements);
          throw new Error('the answer was lost, and the next try refused');
        },
        { maxInFlight: 1, maxBatch: 64 },
      );
      const repository = new RunRepository(database, group);
      const [first, ...batched] = [id('lone'), id('lost'), id('lost')];
      const answers = await Promise.all([first, ...batched].map((runId) => repository.start(plain(runId))));
      // Not 'exists': each run is claimed back by its own start (a new token), so it executes now, not once its lease lapses.
      expect(answers.map((a) => (a as ClaimedRun).leaseToken)).toEqual(['1', '2', '2']);
      expect(await db.count('runs', `id = ANY($1) AND status = 'running' AND lease_owner = 'elsewhere'`, [batched])).toBe(2);
    });

    it('a lone start goes out as the lean statement with its deadline and keys, and an id that exists inserts nothing', async () => {
      const [fresh, existing] = [id('lone'), id('existing')];
      await leased([existing]);
      const repository = new RunRepository(database, groupCommitOn(database, false));
      const deadline = new Date(Date.now() + 3_600_000);
      const sent = jest.spyOn(database, 'query'); // watched, not replaced: the statement runs as ever
      const started = (await repository.start({ ...plain(fresh), limits: { deadline }, keys: { order: 'o-1' } })) as ClaimedRun;
      // The app's own passes (claims, schedules) query meanwhile: only the statements that insert runs are this start's.
      const inserts = sent.mock.calls.map(([sql]) => sql).filter((sql) => sql.includes(`INSERT INTO ${database.tables.runs}`));
      expect(inserts).toEqual([startClaimedRunSql(database.tables)]);
      sent.mockRestore();
      expect(started).toMatchObject({ id: fresh, leaseToken: '1', parentless: true, unqueued: true });
      expect(new Date(started.deadline!).getTime()).toBe(deadline.getTime());
      expect(await repository.start(plain(existing))).toBeNull();
      const [row] = await db.query<{ keys: Record<string, string>; status: string; lease_owner: string }>(
        `SELECT keys, status, lease_owner FROM durable.runs WHERE id = $1`,
        [fresh],
      );
      expect(row).toEqual({ keys: { order: 'o-1' }, status: 'running', lease_owner: 'elsewhere' });
      expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [[fresh, existing]])).toBe(1);
    });

    it('an id given twice in one batch is inserted for the first, and an id that exists inserts nothing', async () => {
      const [lone, existing, twice, other] = [id('lone'), id('existing'), id('twice'), id('other')];
      await leased([existing]);
      const { repository, sizes } = starter();
      const results = await Promise.all([lone, existing, twice, twice, other].map((run) => repository.start(plain(run))));
      expect(sizes).toEqual([1, 4]);
      expect(results.map((r) => (r === null ? null : (r as ClaimedRun).id))).toEqual([lone, null, twice, null, other]);
      expect((results[2] as ClaimedRun).leaseToken).toBe('1');
      expect(await db.count('runs', `id = ANY($1) AND status = 'running' AND lease_owner = 'elsewhere'`, [[lone, twice, other]])).toBe(3);
      expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [[lone, existing, twice, other]])).toBe(3);
    });

    it("through the client, the second start of an id in a batch finds the first's run, and another workflow's is refused", async () => {
      const [a, b] = [id('same'), id('clash')];
      const starts = await Promise.allSettled([
        app.client.start(ThreeSteps, 1, { runId: id('first') }),
        app.client.start(ThreeSteps, 1, { runId: a }),
        app.client.start(ThreeSteps, 2, { runId: a }),
        app.client.start(ThreeSteps, 1, { runId: b }),
        app.client.start(OneStep, 1, { runId: b }),
      ]);
      expect(starts.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
      expect((starts[4] as PromiseRejectedResult).reason).toBeInstanceOf(RunConflictError);
      const [first, second] = starts.slice(1, 3).map((s) => (s as PromiseFulfilledResult<{ runId: string }>).value.runId);
      expect([first, second]).toEqual([a, a]);
      expect(await app.client.handle(a).result()).toBe(4); // the first caller's input
      expect(await startCommits([a, b])).toBe(1); // the four behind the lone first start went out as one batch
      expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [[a, b]])).toBe(2);
    });

    it("queued ones go out together: each queue's free slots to its first starts in order, the rest pending (their queue NOTIFYed, their timeout kept for their first execution unless it includes the queue)", async () => {
      const [open, behind, unlimited] = [id('open'), id('behind'), id('unlimited')];
      await db.query(`INSERT INTO durable.queue_slots (queue, slot) SELECT $1, generate_series(1, 3)`, [open]);
      await db.query(`INSERT INTO durable.queue_slots (queue, slot) VALUES ($1, 1)`, [behind]);
      await db.query(`INSERT INTO durable.runs (id, workflow, status, queue) VALUES ($1, 'w', 'pending', $2)`, [id('waiting'), behind]);
      const existing = id('existing');
      await leased([existing]);
      const runs = [id('lone'), existing, id('a'), id('b'), id('c'), id('d'), id('e')];
      const listener = new Client(databaseUrl());
      await listener.connect();
      const notified: string[] = [];
      listener.on('notification', (n) => notified.push(n.payload!));
      await listener.query(`LISTEN "${queueChannel(schema)}"`);
      const { repository, sizes } = starter();
      let results: Awaited<ReturnType<RunRepository['start']>>[];
      try {
        results = await Promise.all(
          [
            queued(open, 3)(runs[0]),
            queued(open, 3)(runs[1]), // exists: takes no slot from the starts behind it
            queued(open, 3)(runs[2]),
            { ...queued(behind, 1)(runs[3]), limits: { timeoutMs: 60_000, timeoutIncludesQueue: true } },
            queued(open, 3)(runs[4]),
            queued(unlimited, null)(runs[5]),
            queued(open, 3)(runs[6]),
          ].map((start) => repository.start(start)),
        );
        await eventually(async () => notified.length === 2, 'the two queues with runs left pending NOTIFYed');
      } finally {
        await listener.end();
      }
      expect(sizes).toEqual([1, 6]);
      expect(results.map((r) => (r === null || typeof r === 'string' ? r : (r as ClaimedRun).id))).toEqual([
        runs[0],
        null,
        runs[2],
        'pending',
        runs[4],
        runs[5],
        'pending',
      ]);
      expect(notified.sort()).toEqual([behind, open].sort());
      const slots = await db.query<{ slot: number; holder: string }>(
        `SELECT slot, holder FROM durable.queue_slots WHERE queue = $1 ORDER BY slot`,
        [open],
      );
      expect(slots.map((s) => s.holder)).toEqual([runs[0], runs[2], runs[4]]);
      expect(await db.count('queue_slots', 'queue = $1 AND holder IS NULL', [behind])).toBe(1); // a run of it is pending: none taken
      const rows = await db.query<{
        id: string;
        status: string;
        lease_owner: string | null;
        timed: boolean;
        timeout_ms: string | null;
        queue: string | null;
      }>(
        `SELECT r.id, r.status, r.lease_owner, r.deadline IS NOT NULL AS timed, r.timeout_ms, h.detail->>'queue' AS queue
         FROM durable.runs r JOIN durable.history h ON h.run_id = r.id AND h.event = 'started' WHERE r.id = ANY($1) ORDER BY array_position($1, r.id)`,
        [runs.filter((run) => run !== existing)],
      );
      expect(rows).toEqual([
        { id: runs[0], status: 'running', lease_owner: 'elsewhere', timed: true, timeout_ms: null, queue: open },
        { id: runs[2], status: 'running', lease_owner: 'elsewhere', timed: true, timeout_ms: null, queue: open },
        { id: runs[3], status: 'pending', lease_owner: null, timed: true, timeout_ms: null, queue: null }, // its timeout includes the queue
        { id: runs[4], status: 'running', lease_owner: 'elsewhere', timed: true, timeout_ms: null, queue: open },
        { id: runs[5], status: 'running', lease_owner: 'elsewhere', timed: true, timeout_ms: null, queue: unlimited },
        { id: runs[6], status: 'pending', lease_owner: null, timed: false, timeout_ms: '60000', queue: null },
      ]);
    });

    for (const kind of ['plain', 'queued'] as const) {
      it(`a start whose id an open transaction is inserting holds up only itself: the batch stops waiting and is split (${kind} starts)`, async () => {
        const [lone, blocked, a, b] = [id('lone'), id('blocked'), id('a'), id('b')];
        const start = await startsOf(kind);
        const { repository, sizes } = starter();
        const holder = await inserting(blocked);
        try {
          const [first, held, ...others] = [lone, blocked, a, b].map((run) => repository.start(start(run)));
          expect((await Promise.all([first, ...others])).map((r) => (r as ClaimedRun).id)).toEqual([lone, a, b]);
          expect(await Promise.race([held.then(() => 'settled'), Promise.resolve('waiting')])).toBe('waiting');
          await holder.query('ROLLBACK');
          expect(((await held) as ClaimedRun).id).toBe(blocked);
        } finally {
          await holder.end();
        }
        expect(sizes.slice(0, 2)).toEqual([1, 3]);
        expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [[lone, blocked, a, b]])).toBe(4);
        expect(await db.count('queue_slots', 'holder = ANY($1)', [[lone, blocked, a, b]])).toBe(kind === 'queued' ? 4 : 0);
      });
    }

    for (const kind of ['plain', 'queued'] as const) {
      it(`a start batch whose session is cut mid-statement is tried again whole and every run starts once (${kind} starts)`, async () => {
        const runs = Array.from({ length: 6 }, () => id('cutstart'));
        const start = await startsOf(kind);
        const { repository, sizes } = starter();
        // The last id being inserted makes the batch's insert wait on it, mid-statement.
        const holder = await inserting(runs[5]);
        try {
          const started = Promise.all(runs.map((run) => repository.start(start(run))));
          const blocked = await batchWaitingOnLock('the batch waiting on the id being inserted');
          await db.query('SELECT pg_terminate_backend($1)', [blocked.pid]);
          await holder.query('ROLLBACK');
          expect((await started).map((r) => (r as ClaimedRun).id)).toEqual(runs);
        } finally {
          await holder.end();
        }
        expect(sizes.slice(0, 2)).toEqual([1, 5]);
        expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [runs])).toBe(6);
        // Each run in a slot of its own: the cut try's slots were given back with its transaction.
        expect(await db.count('queue_slots', 'holder = ANY($1)', [runs])).toBe(kind === 'queued' ? 6 : 0);
      });
    }

    /**
     * take_queue_slots, changed in place (its callers' cached plans keep calling it) to wait, in calls
     * for at least `least` slots, on an advisory lock the test holds: the start statement's snapshot is
     * taken, and the test can commit a slot before the function looks. `restore` puts the original back.
     */
    const slotsTakenLate = async (least: number) => {
      const key = randomBytes(3).readUIntBE(0, 3);
      const [{ def }] = await db.query<{ def: string }>(`SELECT pg_get_functiondef(to_regprocedure($1)) AS def`, [
        `"${schema}".take_queue_slots(text, integer, integer)`,
      ]);
      const held = def.replace(/\bBEGIN\b/, `BEGIN IF n >= ${least} THEN PERFORM pg_advisory_xact_lock_shared(${key}); END IF;`);
      const lock = new Client(databaseUrl());
      await lock.connect();
      await lock.query('SELECT pg_advisory_lock($1)', [key]);
      await db.query(held);
      return {
        /** The start's session once it waits in the function. */
        waiting: () =>
          eventually(
            async () =>
              (await db.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, [key])).length > 0,
            'the start waiting to take its slots',
          ),
        release: () => lock.query('SELECT pg_advisory_unlock($1)', [key]),
        restore: async () => {
          await db.query(def);
          await lock.end();
        },
      };
    };

    for (const kind of ['lone', 'batched'] as const) {
      it(`a slot made after a queued start's statement began (a raised concurrency) is not taken by it: no run executes without a slot (${kind} start)`, async () => {
        const queue = id('raised');
        const holder = id('holder');
        await leased([holder]);
        await db.query(`UPDATE durable.runs SET queue = $1 WHERE id = $2`, [queue, holder]);
        await db.query(`INSERT INTO durable.queue_slots (queue, slot, holder) VALUES ($1, 1, $2)`, [queue, holder]);
        const late = await slotsTakenLate(kind === 'lone' ? 1 : 2);
        const { repository, sizes } = starter();
        const runs = kind === 'lone' ? [id('late')] : [id('first'), id('late'), id('late')];
        try {
          // A batch goes out behind a lone start: the first, of a queue without a concurrency, takes no slot.
          const first = kind === 'batched' ? repository.start(queued(id('unlimited'), null)(runs[0])) : undefined;
          const started = Promise.all(runs.slice(kind === 'lone' ? 0 : 1).map((run) => repository.start(queued(queue, 2)(run))));
          await late.waiting();
          // The deploy that raised the concurrency to 2 makes the slot (mendSlotsSql), committed now.
          await db.query(`INSERT INTO durable.queue_slots (queue, slot) VALUES ($1, 2)`, [queue]);
          await late.release();
          expect(await started).toEqual(kind === 'lone' ? ['pending'] : ['pending', 'pending']);
          if (first) expect(((await first) as ClaimedRun).id).toBe(runs[0]);
        } finally {
          await late.restore();
        }
        if (kind === 'batched') expect(sizes).toEqual([1, 2]);
        expect(await db.count('queue_slots', 'queue = $1 AND slot = 2 AND holder IS NULL', [queue])).toBe(1);
        const unslotted = `queue = $1 AND status = 'running' AND id NOT IN (SELECT holder FROM durable.queue_slots WHERE holder IS NOT NULL)`;
        expect(await db.count('runs', unslotted, [queue])).toBe(0);
      });
    }

    /**
     * `database`, except that the first statement `loses` picks commits and then loses its answer, as
     * a session cut after the commit would: the statement's next try finds its runs existing.
     */
    const losingFirstAnswer = (loses: (sql: string) => boolean) => {
      let lost = false;
      const lossy = Object.create(database) as DurableDatabase;
      lossy.query = async <T>(sql: string, params?: unknown[]) => {
        const rows = await database.query<T>(sql, params);
        if (!lost && loses(sql)) {
          lost = true;
          throw new Error('Connection terminated unexpectedly');
        }
        return rows;
      };
      return lossy;
    };
    const insertsRuns = (sql: string) => sql.includes(`INSERT INTO ${database.tables.runs}`);

    for (const kind of ['lone', 'general', 'batched', 'queued'] as const) {
      it(`a start whose committed answer was lost claims its run back at once, answered as inserted, and leaves others' runs alone (${kind})`, async () => {
        const runs = Array.from({ length: kind === 'lone' || kind === 'general' ? 1 : 4 }, () => id('lost'));
        const [taken, otherWorkflow] = [id('taken'), id('other-workflow')];
        await leased([taken]); // the same id, claimed by another instance
        await db.query(`UPDATE durable.runs SET workflow = 'three-steps', input = '1', lease_owner = 'someone' WHERE id = $1`, [taken]);
        const start =
          kind === 'queued'
            ? await startsOf('queued')
            : kind === 'general'
              ? (run: string) => ({ ...plain(run), startAt: new Date(Date.now() - 1_000) }) // an instant past: the general statement
              : plain;
        // The batch's statement loses its answer (the lone first start ahead of it goes out as ever).
        const batched = kind === 'batched' || kind === 'queued';
        const lossy = losingFirstAnswer((sql) => insertsRuns(sql) && (!batched || sql.includes('jsonb_to_recordset')));
        const repository = new RunRepository(
          lossy,
          groupCommitOn(lossy, kind === 'lone' || kind === 'general' ? false : { maxInFlight: 1, maxBatch: 64 }),
        );
        const ids = batched ? [id('first'), ...runs, taken] : runs;
        const answers = await Promise.all(ids.map((run) => repository.start(start(run))));
        const byId = new Map(ids.map((run, n) => [run, answers[n] as ClaimedRun | null]));
        for (const run of runs) expect(byId.get(run)).toMatchObject({ id: run, leaseToken: '2', fresh: false });
        if (batched) {
          expect(byId.get(taken)).toBeNull();
          expect(byId.get(ids[0])).toMatchObject({ leaseToken: '1', fresh: true });
        }
        // Another workflow's start of a run this instance holds is not claimed back either.
        const clashing = losingFirstAnswer(insertsRuns);
        const clash = new RunRepository(clashing, groupCommitOn(clashing, false));
        expect(await clash.start({ ...plain(runs[0], otherWorkflow) })).toBeNull();
        const rows = await db.query<{ id: string; lease_token: string; lease_owner: string }>(
          `SELECT id, lease_token, lease_owner FROM durable.runs WHERE id = ANY($1) ORDER BY array_position($1, id)`,
          [[...runs, taken]],
        );
        expect(rows).toEqual([
          ...runs.map((run) => ({ id: run, lease_token: '2', lease_owner: 'elsewhere' })),
          { id: taken, lease_token: '1', lease_owner: 'someone' },
        ]);
        expect(await db.count('history', `run_id = ANY($1) AND event = 'started'`, [runs])).toBe(runs.length);
        if (kind === 'queued') expect(await db.count('queue_slots', 'holder = ANY($1)', [runs])).toBe(runs.length);
      });
    }

    it('through the client, a start whose committed answer was lost executes its run at once, each step once, and says it created it', async () => {
      ThreeSteps.executed = 0;
      const query = database.query.bind(database);
      let lost = false;
      const spy = jest.spyOn(database, 'query').mockImplementation(async (sql, params, manager) => {
        const rows = await query(sql, params, manager);
        if (!lost && insertsRuns(sql)) {
          lost = true;
          throw new Error('Connection terminated unexpectedly');
        }
        return rows;
      });
      try {
        const handle = await app.client.start(ThreeSteps, 1);
        expect(handle.created).toBe(true);
        expect(await handle.result()).toBe(4);
        expect(ThreeSteps.executed).toBe(3);
        // Executed under the token it was claimed back with, by no claim (a claim records `claimed`).
        const [row] = await db.query<{ lease_token: string }>(`SELECT lease_token FROM durable.runs WHERE id = $1`, [handle.runId]);
        expect(row.lease_token).toBe('2');
        expect(await db.count('history', `run_id = $1 AND event = 'claimed'`, [handle.runId])).toBe(0);
      } finally {
        spy.mockRestore();
      }
      expect(lost).toBe(true);
    });
  });

  describe('writes of every kind in one commit', () => {
    /** The repositories of one instance, sharing its group commit as the module wires them. */
    const instance = (database: DurableDatabase) => {
      const group = groupCommitOn(database, { maxInFlight: 1, maxBatch: 64 });
      return {
        runs: new RunRepository(database, group),
        journal: new JournalRepository(database, group),
        ends: new RunEndRepository(database, group),
      };
    };
    /**
     * The sessions of this schema's batches of several kinds (`together`) waiting on a lock, for at least `ms`. The
     * schema is in a PREPARE's text, or in an end's wake channel once the session has prepared the statements.
     */
    const togetherWaiting = (ms = 0) =>
      db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%durable_together_%' AND query LIKE $1
           AND now() - query_start >= $2 * interval '1 millisecond'`,
        [`%${schema}%`, ms],
      );
    const start = (runId: string): StartRunArgs => ({
      id: runId,
      workflow: 'three-steps',
      input: '1',
      claimBy: 'elsewhere',
      leaseMs: 60_000,
      actor: 'test',
      traceContext: null,
    });
    /** The transactions (xmin) that wrote the runs' journals, and the rows of the runs a start or an end wrote (a checkpoint only locks its run's row). */
    const writers = async (runs: string[]) => {
      const rows = await db.query<{ xmin: string }>(
        `SELECT xmin::text FROM durable.runs WHERE id = ANY($1) AND (status <> 'running' OR lease_owner = 'elsewhere')
         UNION ALL SELECT xmin::text FROM durable.steps WHERE run_id = ANY($1)`,
        [runs],
      );
      return new Set(rows.map((r) => r.xmin));
    };
    /**
     * While a lone checkpoint is on the wire: a start, two checkpoints, a timer, and an end with its
     * pending checkpoint, of five runs. They queue behind the lone write and go out as one batch.
     */
    const everyKind = async ({ runs, journal, ends }: ReturnType<typeof instance>, key = 'step') => {
      const [lone, started, ...held] = [id('lone'), id('started'), id('cp'), id('cp'), id('timer'), id('ended')];
      await leased([lone, ...held]);
      const first = journal.checkpoint(lone, '1', 'step', 'step', ok('lone'), null);
      const answers = await Promise.allSettled([
        runs.start(start(started)),
        journal.checkpoint(held[0], '1', key, 'step', ok(1), null),
        journal.checkpoint(held[1], '1', 'step', 'step', ok(2), null),
        journal.timer(held[2], '1', 'sleep:nap', 'timer', 60_000),
        ends.finish({ id: held[3], leaseToken: '1' } as ClaimedRun, 'completed', '"done"', null, 'test', undefined, {
          key: 'last',
          kind: 'step',
          step: ok(3),
          startedAt: null,
        }),
      ]);
      expect((await first).status).toBe('written');
      return { lone, batched: [started, ...held], answers };
    };

    it('a start, checkpoints, a timer and an end that meet go out as one transaction (one commit), each answered as alone', async () => {
      const { lone, batched, answers } = await everyKind(instance(database));
      const [started, checkpointed, , timed, ended] = answers.map((a) => (a as PromiseFulfilledResult<unknown>).value);
      expect(started).toMatchObject({ id: batched[0], leaseToken: '1', fresh: true });
      expect(checkpointed).toEqual({ status: 'written' });
      expect(timed).toMatchObject({ until: expect.any(String) });
      expect(ended).toBe(true);
      const [together] = [...(await writers(batched))];
      expect(await writers(batched)).toEqual(new Set([together]));
      expect(await writers([lone])).not.toContain(together);
      expect(await db.count('steps', 'run_id = ANY($1)', [batched])).toBe(4);
      expect(await db.count('history', `run_id = ANY($1) AND event IN ('started', 'completed')`, [batched])).toBe(2);
    });

    for (const prepared of [true, false]) {
      it(`goes as one transaction batch after batch on one connection, ${prepared ? 'its statements prepared by name once' : 'without prepared statements (PgBouncer): one after another'}`, async () => {
        const own = await DurableDatabase.open({ connection: databaseUrl(), schema, preparedStatements: prepared }, 1);
        try {
          const repositories = instance(own);
          for (let round = 0; round < 3; round++) {
            const { batched, answers } = await everyKind(repositories);
            expect(answers.map((a) => a.status)).toEqual(Array(5).fill('fulfilled'));
            expect((await writers(batched)).size).toBe(1);
          }
        } finally {
          await own.close();
        }
      });
    }

    it('a batch that fails keeps its connection: the session says which statements it prepared before the failure, and the next batch on it goes through', async () => {
      const own = await DurableDatabase.open({ connection: databaseUrl(), schema }, 1);
      try {
        const session = async () => (await own.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid;
        const before = await session();
        const one = { sql: 'SELECT $1::int AS v', params: [1] };
        const divide = (by: number) => ({ sql: 'SELECT 10 / $1::int AS v', params: [by] });
        const missing = { sql: `SELECT v FROM "${schema}".no_such_table WHERE v = $1::int`, params: [1] };
        // Fails in an EXECUTE: both statements were prepared before it. Then in a PREPARE: the first was.
        await expect(own.together([one, divide(0)])).rejects.toThrow(/division by zero/);
        await expect(own.together([{ sql: 'SELECT $1::int + 1 AS v', params: [1] }, missing])).rejects.toThrow(/no_such_table/);
        // Each statement is prepared once and executed again (a PREPARE of a name the session holds would fail).
        expect(await own.together([one, divide(5), { sql: 'SELECT $1::int + 1 AS v', params: [2] }])).toEqual([
          [{ v: 1 }],
          [{ v: 2 }],
          [{ v: 3 }],
        ]);
        expect(await session()).toBe(before);
      } finally {
        await own.close();
      }
    });

    it('a write Postgres refuses fails alone: the batch of every kind is refused whole, and each of its writes goes again alone', async () => {
      // A key past the btree's row limit (random, so it does not compress): Postgres refuses the statement, and the transaction with it.
      const { batched, answers } = await everyKind(instance(database), randomBytes(6_000).toString('hex'));
      expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect(String((answers[1] as PromiseRejectedResult).reason)).toMatch(/index row/);
      expect(await db.count('runs', `id = $1 AND status = 'running'`, [batched[0]])).toBe(1);
      expect(await db.count('steps', 'run_id = ANY($1)', [batched])).toBe(3);
      expect(await db.count('runs', `id = $1 AND status = 'completed'`, [batched[4]])).toBe(1);
      expect((await writers(batched)).size).toBe(4); // each alone
    });

    it("a batch's start statement goes last, so its lock timeout leaves the other kinds' waits alone", async () => {
      const repositories = instance(database);
      const holder = new Client(databaseUrl());
      await holder.connect();
      const [lone, started, ended] = [id('lone'), id('started'), id('ended')];
      await leased([lone, ended]);
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [ended]);
        const first = repositories.journal.checkpoint(lone, '1', 'step', 'step', ok('lone'), null);
        const written = Promise.all([
          repositories.ends.finish({ id: ended, leaseToken: '1' } as ClaimedRun, 'completed', '"done"', null, 'test'),
          repositories.runs.start(start(started)),
        ]);
        await first;
        // The end waits well past the starts' lock timeout (START_BATCH_LOCK_TIMEOUT, 100 ms) before the row is let go.
        await eventually(async () => (await togetherWaiting(500))[0], 'the batch waiting on the held row for half a second');
        await holder.query('COMMIT');
        expect(await written).toEqual([true, expect.objectContaining({ id: started })]);
      } finally {
        await holder.end();
      }
      expect((await writers([started, ended])).size).toBe(1);
    });

    it("two instances' batches that deadlock (each holds a parent's row the other's end wakes): the one Postgres rolls back is sent again whole, and every write lands once", async () => {
      const other = await DurableDatabase.open({ connection: databaseUrl(), schema }, 2);
      const holder = new Client(databaseUrl());
      await holder.connect();
      const deadlocks = async () =>
        Number((await db.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()'))[0].n);
      const before = await deadlocks();
      // Instance A executes the parent pA and the child cA, whose parent is pB; instance B the reverse.
      const [pA, cA, pB, cB, loneA, loneB] = [id('pA'), id('cA'), id('pB'), id('cB'), id('lone'), id('lone')];
      await leased([pA, cA, pB, cB, loneA, loneB]);
      await db.query(`UPDATE durable.runs SET parent_id = CASE id WHEN $1 THEN $3 ELSE $4 END WHERE id IN ($1, $2)`, [cA, cB, pB, pA]);
      try {
        // Both children's rows held, so each batch takes its parent's row (its checkpoint) and then waits on its child's.
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${schema}".runs WHERE id IN ($1, $2) FOR UPDATE`, [cA, cB]);
        const batch = (repositories: ReturnType<typeof instance>, lone: string, parent: string, child: string) => {
          const first = repositories.journal.checkpoint(lone, '1', 'step', 'step', ok('lone'), null);
          const written = Promise.all([
            repositories.journal.checkpoint(parent, '1', 'step', 'step', ok(parent), null),
            repositories.ends.finish({ id: child, leaseToken: '1' } as ClaimedRun, 'completed', '"done"', null, 'test'),
          ]);
          return first.then(() => written);
        };
        const a = batch(instance(database), loneA, pA, cA);
        const b = batch(instance(other), loneB, pB, cB);
        await eventually(async () => (await togetherWaiting()).length === 2, 'both batches waiting on the held children');
        // Let go: each end wakes the parent the other batch holds FOR SHARE, and Postgres rolls one batch back.
        await holder.query('COMMIT');
        expect(await Promise.all([a, b])).toEqual([
          [{ status: 'written' }, true],
          [{ status: 'written' }, true],
        ]);
      } finally {
        await holder.end();
        await other.close();
      }
      await eventually(async () => (await deadlocks()) > before, 'the deadlock counted by Postgres');
      expect(await db.count('steps', 'run_id = ANY($1)', [[pA, pB]])).toBe(2);
      expect(await db.count('runs', `id = ANY($1) AND status = 'completed'`, [[cA, cB]])).toBe(2);
      expect(await db.count('history', `run_id = ANY($1) AND event = 'completed'`, [[cA, cB]])).toBe(2);
      // Each parent woken once: the rolled-back try's bump is gone with it.
      expect(await db.count('runs', 'id = ANY($1) AND wake_seq = 1', [[pA, pB]])).toBe(2);
      expect((await writers([pA, cA])).size).toBe(1);
      expect((await writers([pB, cB])).size).toBe(1);
    });

    it('a batch of every kind whose session is cut mid-statement is tried again whole, and every write lands once', async () => {
      const repositories = instance(database);
      const holder = new Client(databaseUrl());
      await holder.connect();
      const [lone, started, checkpointed, ended] = [id('lone'), id('started'), id('cp'), id('ended')];
      await leased([lone, checkpointed, ended]);
      try {
        // Another session holds the ended run's row, so the batch's end waits on it, mid-transaction.
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [ended]);
        const first = repositories.journal.checkpoint(lone, '1', 'step', 'step', ok('lone'), null);
        const written = Promise.all([
          repositories.runs.start(start(started)),
          repositories.journal.checkpoint(checkpointed, '1', 'step', 'step', ok(1), null),
          repositories.ends.finish({ id: ended, leaseToken: '1' } as ClaimedRun, 'completed', '"done"', null, 'test'),
        ]);
        await first;
        const blocked = await eventually(async () => (await togetherWaiting())[0], 'the batch waiting on the held row');
        await db.query('SELECT pg_terminate_backend($1)', [blocked.pid]);
        await holder.query('COMMIT');
        expect(await written).toEqual([expect.objectContaining({ id: started, leaseToken: '1' }), { status: 'written' }, true]);
      } finally {
        await holder.end();
      }
      expect(await db.count('runs', `id = $1 AND status = 'running' AND lease_token = 1`, [started])).toBe(1);
      expect(await db.count('steps', 'run_id = $1', [checkpointed])).toBe(1);
      expect(await db.count('history', `run_id = ANY($1) AND event IN ('started', 'completed')`, [[started, ended]])).toBe(2);
      expect((await writers([started, checkpointed, ended])).size).toBe(1);
    });
  });

  it('refuses a groupCommit option that cannot work, naming it', async () => {
    await expect(boot({ groupCommit: { maxBatch: 0 }, metrics: false })).rejects.toThrow(
      'DurableModule option groupCommit.maxBatch must be a whole number from 1 to 1000; got 0.',
    );
    await expect(boot({ groupCommit: { maxInFlight: 1.5 }, metrics: false })).rejects.toThrow(
      'DurableModule option groupCommit.maxInFlight must be a whole number from 1 to 64; got 1.5.',
    );
  });
});
