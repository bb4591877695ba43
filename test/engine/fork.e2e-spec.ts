import {
  DurableWorkflow,
  InvalidArgumentError,
  NonRetryableError,
  RunNotFoundError,
  Workflow,
  WorkflowContext,
  WorkflowNotFoundError,
  WorkflowRef,
} from 'nestjs-durable';
import { Db, DurableTestApp, eventually, fileApps, startApp, uniqueSchema } from '../setup/durable-app';

/** Effects by run and step, in this process: what ran again and what did not. */
const effects: string[] = [];
const effect = (runId: string, what: string) => {
  effects.push(`${runId}:${what}`);
  return what;
};
const countOf = (runId: string, what: string) => effects.filter((e) => e === `${runId}:${what}`).length;

/** Charges, ships in a child, waits for a confirmation, then closes; `fail` breaks the close step. */
@Workflow('fk-order', { retry: { maxAttempts: 1 } })
class Order implements DurableWorkflow<{ amount: number; fail?: boolean }, unknown> {
  async run(input: { amount: number; fail?: boolean }, ctx: WorkflowContext) {
    const charge = await ctx.step('charge', () => effect(ctx.runId, `charge ${input.amount}`));
    const shipment = await ctx.startChild(Ship, null, { step: 'ship' });
    const shipped = await shipment.result();
    const confirmation = await ctx.waitForSignal<string>('confirm');
    const close = await ctx.step('close', () => {
      if (input.fail) throw new NonRetryableError('close is broken');
      return effect(ctx.runId, 'close');
    });
    return { charge, shipped, confirmation, close };
  }
}

/** Opened by the test: holds the source's second step while it executes. */
let release!: () => void;
const held = new Promise<void>((resolve) => (release = resolve));

/** A first step, then a second one the test holds open: the run executes (leased) while it is forked. */
@Workflow('fk-busy')
class Busy implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const first = await ctx.step('first', () => effect(ctx.runId, 'first'));
    const second = await ctx.step('second', () => held.then(() => effect(ctx.runId, 'second')));
    return { first, second };
  }
}

/** Spawns a child that waits for a signal, then a step, then reads the child: a fork from the step reuses the child. */
@Workflow('fk-parent')
class Parent implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(Held, null, { step: 'kid' });
    await ctx.step('notify', () => effect(ctx.runId, 'notified'));
    return child.result();
  }
}

/** As Parent, but reads its child through a select (a child arm beside a signal that never comes). */
@Workflow('fk-selecting')
class Selecting implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(Held, null, { step: 'kid' });
    await ctx.step('notify', () => 'notified');
    return ctx.select('first', { kid: child, abort: ctx.signal('abort') });
  }
}

@Workflow('fk-held')
class Held implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal<string>('go');
  }
}

/** A step of the longest name, taken twice: the second one's checkpoint key (`<name>#2`) is 202 characters. */
const LONG = 's'.repeat(200);
@Workflow('fk-long')
class Long implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step(LONG, () => effect(ctx.runId, 'first'));
    return ctx.step(LONG, () => effect(ctx.runId, 'second'));
  }
}

/** Under a one-hour timeout; `fail` breaks it between its two steps. */
@Workflow('fk-timed', { timeout: '1h', retry: { maxAttempts: 1 } })
class Timed implements DurableWorkflow<{ fail?: boolean }, string> {
  async run(input: { fail?: boolean }, ctx: WorkflowContext) {
    await ctx.step('first', () => 'one');
    if (input.fail) throw new NonRetryableError('broken between the steps');
    return ctx.step('second', () => 'two');
  }
}

@Workflow('fk-ship')
class Ship implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('label', () => effect(ctx.runId, 'label'));
  }
}

describe('fork: a new run from a step of another, the steps before it not run again', () => {
  const schema = uniqueSchema('fk');
  const db = new Db(schema);
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await startApp({
      schema,
      providers: [Order, Ship, Busy, Parent, Selecting, Held, Long, Timed],
      options: { appVersion: '2.4.0', queues: { 'fk-q': { concurrency: 4 } } },
    });
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  /** A failed run: charged, shipped, confirmed, and broken at close. */
  const failedOrder = async () => {
    const run = await app.client.start(Order, { amount: 10, fail: true });
    await eventually(async () => (await app.client.getRun(run.runId)).status === 'waiting', 'waiting for confirm');
    await app.signals.signal(run.runId, 'confirm', 'yes');
    await expect(run.result({ timeout: '10s' })).rejects.toThrow(/close is broken/);
    return run.runId;
  };

  it('from the last step: the charge is not run again, the child is reused, the signal before it copied; the source is untouched', async () => {
    const source = await failedOrder();
    const fork = await app.client.fork(source, { fromStep: 'close', input: { amount: 10 }, actor: 'ops' });
    expect(await fork.result({ timeout: '10s' })).toEqual({ charge: 'charge 10', shipped: 'label', confirmation: 'yes', close: 'close' });
    expect(countOf(source, 'charge 10')).toBe(1);
    expect(countOf(fork.runId, 'charge 10')).toBe(0);
    expect(await db.count('runs', `parent_id = $1`, [fork.runId])).toBe(0); // the child reused, none spawned
    const view = await app.client.getRun(fork.runId);
    expect(view).toMatchObject({ forkedFrom: source, appVersion: '2.4.0', status: 'completed' });
    expect((await app.client.getRun(source)).status).toBe('failed');
    expect(
      await db.count('history', `run_id = $1 AND event = 'forked' AND detail->>'fork' = $2 AND actor = 'ops'`, [source, fork.runId]),
    ).toBe(1);
    expect(await db.count('history', `run_id = $1 AND event = 'forked-from' AND detail->>'source' = $2`, [fork.runId, source])).toBe(1);
    expect((await app.client.listRuns({ forkedFrom: source })).runs.map((r) => r.runId)).toEqual([fork.runId]);
  });

  it("copies the source's keys and queue place, and takes the workflow's timeout from its own admission (a passed deadline is not copied)", async () => {
    const source = await app.client.start(
      Timed,
      { fail: true },
      { keys: { order: 'o-7' }, queue: 'fk-q', partitionKey: 't-1', priority: 7 },
    );
    await expect(source.result({ timeout: '10s' })).rejects.toThrow(/broken between the steps/);
    await app.client.setDeadline(source.runId, new Date(Date.now() - 60_000));
    const before = Date.now();
    const fork = await app.client.fork(source.runId, { fromStep: 'first', input: {} });
    expect(await fork.result({ timeout: '10s' })).toBe('two');
    const view = await app.client.getRun(fork.runId);
    expect(view).toMatchObject({ keys: { order: 'o-7' }, queue: 'fk-q', partitionKey: 't-1', priority: 7, status: 'completed' });
    expect(view.deadline!.getTime()).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000); // the database's clock, a second's leeway
    expect(view.deadline!.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000);
    expect((await app.client.listRuns({ keys: { order: 'o-7' } })).runs.map((r) => r.runId).sort()).toEqual(
      [source.runId, fork.runId].sort(),
    );
  });

  it("from a middle step (the child's spawn): the child is started anew, signals 'before' leaves out the later one, 'all' copies it", async () => {
    const source = await failedOrder();
    const before = await app.client.fork(source, { fromStep: 'child:ship', input: { amount: 10 } });
    await eventually(async () => (await app.client.getRun(before.runId)).waiting?.kind === 'signal', 'the fork waits for its confirmation');
    expect(await db.count('runs', `parent_id = $1`, [before.runId])).toBe(1); // a new child
    expect(countOf(`${before.runId}/ship`, 'label')).toBe(1);
    await app.signals.signal(before.runId, 'confirm', 'again');
    expect(await before.result({ timeout: '10s' })).toMatchObject({ confirmation: 'again' });

    const all = await app.client.fork(source, { fromStep: 'child:ship', input: { amount: 10 }, signals: 'all' });
    expect(await all.result({ timeout: '10s' })).toMatchObject({ confirmation: 'yes' });
    expect(countOf(source, 'charge 10') + countOf(before.runId, 'charge 10') + countOf(all.runId, 'charge 10')).toBe(1);
  });

  it('from the first step, of a fork (a fork of a fork), and of a waiting run: independent runs', async () => {
    const source = await app.client.start(Order, { amount: 5 });
    await eventually(async () => (await app.client.getRun(source.runId)).status === 'waiting', 'the source waits');
    const first = await app.client.fork(source.runId, { fromStep: 'charge', runId: `${source.runId}-refork` });
    expect(first.runId).toBe(`${source.runId}-refork`);
    await eventually(async () => (await app.client.getRun(first.runId)).status === 'waiting', 'the fork waits');
    expect(countOf(first.runId, 'charge 5')).toBe(1); // from the first step: everything again
    const second = await app.client.fork(first.runId, { fromStep: 'child:ship' });
    await eventually(async () => (await app.client.getRun(second.runId)).status === 'waiting', 'the fork of the fork waits');
    expect(countOf(second.runId, 'charge 5')).toBe(0);
    expect((await app.client.getRun(second.runId)).forkedFrom).toBe(first.runId);
    // The source still holds its own wait; a signal to it ends it alone.
    await app.signals.signal(source.runId, 'confirm', 'source');
    expect(await source.result({ timeout: '10s' })).toMatchObject({ confirmation: 'source' });
    expect((await app.client.getRun(second.runId)).status).toBe('waiting');
  });

  it('forking a run while it executes: the source keeps its lease and ends as it would; the fork runs on its own', async () => {
    const source = await app.client.start(Busy, null);
    // The first step's checkpoint committed (not only its function run: its write may still be in a batch), the run still running.
    await eventually(
      async () =>
        (await db.count('steps', `run_id = $1 AND key = 'first'`, [source.runId])) === 1 &&
        (await app.client.getRun(source.runId)).status === 'running',
      'in its second step',
    );
    const [{ lease_token: token }] = await db.query(`SELECT lease_token FROM durable.runs WHERE id = $1`, [source.runId]);
    const fork = await app.client.fork(source.runId, { fromStep: 'first' });
    release();
    expect(await source.result({ timeout: '10s' })).toEqual({ first: 'first', second: 'second' });
    expect(await fork.result({ timeout: '10s' })).toEqual({ first: 'first', second: 'second' });
    expect(countOf(fork.runId, 'first')).toBe(1); // from the first step: it ran again, in the fork
    const [{ lease_token: after }] = await db.query(`SELECT lease_token FROM durable.runs WHERE id = $1`, [source.runId]);
    expect(after).toBe(token); // never taken from the source
  });

  it("cancelling the source cancels the child its fork reuses, and wakes the fork: it reads the child's end instead of waiting forever", async () => {
    const source = await app.client.start(Parent, null);
    await eventually(async () => (await app.client.getRun(source.runId)).status === 'waiting', 'the source waits on its child');
    const fork = await app.client.fork(source.runId, { fromStep: 'notify' });
    const child = `${source.runId}/kid`;
    await eventually(async () => (await app.client.getRun(fork.runId)).waiting?.kind === 'child', 'the fork waits on the same child');
    await app.client.cancel(source.runId);
    expect((await app.client.getRun(child)).status).toBe('cancelled');
    await expect(fork.result({ timeout: '10s' })).rejects.toThrow(`Child run "${child}" cancelled`);
  });

  it("a fork, and a fork of it, parked on a select with an arm on the child they reuse are woken by that child's end, as their source is", async () => {
    const source = await app.client.start(Selecting, null);
    await eventually(async () => (await app.client.getRun(source.runId)).waiting?.kind === 'select', 'the source selecting');
    const fork = await app.client.fork(source.runId, { fromStep: 'notify' });
    const selecting = async (run: { runId: string }) =>
      eventually(async () => (await app.client.getRun(run.runId)).waiting?.kind === 'select', `${run.runId} selecting on the child`);
    await selecting(fork);
    const forkOfFork = await app.client.fork(fork.runId, { fromStep: 'notify' });
    await selecting(forkOfFork);
    await app.signals.signal(`${source.runId}/kid`, 'go', 'went');
    const ended = { key: 'kid', value: expect.objectContaining({ status: 'completed', output: 'went' }) };
    for (const run of [source, fork, forkOfFork]) expect(await run.result({ timeout: '10s' })).toEqual(ended);
  });

  it('a child spawned before the step that retention has deleted: a fork that would wait on it is refused naming it, nothing created; one whose copied journal holds its result goes on without it; from its spawn it is started anew', async () => {
    const sourceId = await failedOrder();
    const child = `${sourceId}/ship`;
    await db.query(`DELETE FROM durable.runs WHERE id = $1`, [child]); // as retention does once the source has ended
    const before = await db.count('runs');
    await expect(app.client.fork(sourceId, { fromStep: 'child-result:ship' })).rejects.toThrow(
      `Cannot fork run "${sourceId}" from "child-result:ship": its child "${child}" (child:ship), spawned before that step, no longer exists`,
    );
    expect(await db.count('runs')).toBe(before);
    // From a step after the child's result: the fork replays the result and never reads the child (it was refused too).
    const closing = await app.client.fork(sourceId, { fromStep: 'close', input: { amount: 10 } });
    expect(await closing.result({ timeout: '10s' })).toMatchObject({ shipped: 'label', close: 'close' });
    expect(await db.count('runs', `id = $1`, [`${closing.runId}/ship`])).toBe(0);
    const fork = await app.client.fork(sourceId, { fromStep: 'child:ship' });
    await eventually(async () => (await app.client.getRun(fork.runId)).status === 'waiting', 'the fork waits, its child started anew');
    expect((await app.client.getRun(`${fork.runId}/ship`)).status).toBe('completed');
  });

  it('bad input: unknown run, unknown step, a taken id, a bad signals option: clear errors, nothing created', async () => {
    const source = await failedOrder();
    const before = await db.count('runs');
    await expect(app.client.fork('no-such-run', { fromStep: 'close' })).rejects.toThrow(RunNotFoundError);
    await expect(app.client.fork(source, { fromStep: 'nope' })).rejects.toThrow(/has no checkpoint "nope"/);
    await expect(app.client.fork(source, { fromStep: 'close', runId: source })).rejects.toThrow(/exists already/);
    await expect(app.client.fork(source, { fromStep: 'close', signals: 'some' as never })).rejects.toThrow(InvalidArgumentError);
    // A misspelt signals would fork without the signals delivered after the step, without a word.
    await expect(app.client.fork(source, { fromStep: 'close', signal: 'all' } as never)).rejects.toThrow(
      /fork\(\): unknown option signal; it takes fromStep, runId, input, signals, actor/,
    );
    await expect(app.client.fork(source, { fromStep: '' })).rejects.toThrow(InvalidArgumentError);
    await expect(app.client.fork(source, { fromStep: 'x'.repeat(10_001) })).rejects.toThrow(/at most 10,000 characters/);
    await expect(app.client.fork(source, { fromStep: 'a\u0000b' })).rejects.toThrow(/without NUL/);
    // An instance that does not register the source's workflow cannot give the fork its timeout: refused, as a trigger is.
    const other = await startApp({ schema, options: { worker: { enabled: false } } });
    try {
      await expect(other.client.fork(source, { fromStep: 'close' })).rejects.toThrow(WorkflowNotFoundError);
    } finally {
      await other.close();
    }
    expect(await db.count('runs')).toBe(before);
  });

  it("from a checkpoint whose key runs past a name's 200 characters (a long step name taken twice): the first is not run again", async () => {
    const source = await app.client.start(Long, null);
    expect(await source.result({ timeout: '10s' })).toBe('second');
    const fork = await app.client.fork(source.runId, { fromStep: `${LONG}#2` });
    expect(await fork.result({ timeout: '10s' })).toBe('second');
    expect([countOf(fork.runId, 'first'), countOf(fork.runId, 'second')]).toEqual([0, 1]);
  });
});

describe('fork: a fork executing when the child it reuses ends', () => {
  const schema = uniqueSchema('fkx');
  const db = new Db(schema);
  let app: DurableTestApp;
  beforeAll(async () => {
    // Awaited children are waited for in-process for 20 s: the fork is running, not parked, when the child ends. Woken, it
    // ends at once; unwoken, it would read the child again only when those 20 s ran out (and, had the child ended between
    // that read and its park, it would have parked for ever).
    app = await startApp({ schema, providers: [Parent, Held], options: { inlineWaitMs: 20_000, leaseMs: 60_000 } });
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  it('is woken at once, as its source is: awaiting it in-process, it does not wait out its in-process wait', async () => {
    const source = await app.client.start(Parent, null);
    await eventually(
      async () => (await db.count('steps', `run_id = $1 AND key = 'notify'`, [source.runId])) === 1,
      'the source past notify',
    );
    const fork = await app.client.fork(source.runId, { fromStep: 'notify' });
    await eventually(
      async () => countOf(fork.runId, 'notified') === 1 && (await db.count('steps', `run_id = $1 AND key = 'notify'`, [fork.runId])) === 1,
      'the fork past notify (its checkpoint written), awaiting the child',
    );
    expect((await app.client.getRun(fork.runId)).status).toBe('running');
    await app.signals.signal(`${source.runId}/kid`, 'go', 'went');
    for (const run of [source, fork]) expect(await run.result({ timeout: '10s' })).toBe('went');
  });
});

describe('fork: inserted while the end of the child it reuses is in flight', () => {
  const schema = uniqueSchema('fke');
  const { db, boot } = fileApps({ schema, providers: [Parent, Selecting, Held], options: { inlineWaitMs: 50 } });
  const locker = new Db(schema);
  // Two instances: the child ends in one whose only slot it holds, the fork executes in the other (in one instance the
  // fork's checkpoint would queue behind the end, a write in flight).
  let ender: DurableTestApp;
  let forker: DurableTestApp;
  beforeAll(async () => {
    ender = await boot({ worker: { concurrency: 1 } });
    forker = await boot();
  });
  afterAll(() => locker.dropSchema());

  const waitingOnLocks = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND datname = current_database()`,
        [`%"${schema}"%`],
      )
    )[0].n;

  /** Forks a run of `workflow`, which awaits its child, while the child's end is in flight; both runs end as `ended`. */
  const forkDuringChildEnd = async (workflow: WorkflowRef<null, unknown>, ended: unknown) => {
    const source = await forker.client.start(workflow, null);
    const child = `${source.runId}/kid`;
    await eventually(
      async () =>
        (await forker.client.getRun(source.runId)).status === 'waiting' && (await forker.client.getRun(child)).status === 'waiting',
      'the source waits on its child, the child on its signal (so the delivery claims it in ender)',
    );
    // The child's end locks the child's row, then waits for the source's row (its parent's wake), held here: the end is in
    // flight with a snapshot from before the fork exists. FOR NO KEY UPDATE leaves the fork's inserts (their keys) free.
    await locker.query('BEGIN');
    try {
      await locker.query(`SELECT 1 FROM durable.runs WHERE id = $1 FOR NO KEY UPDATE`, [source.runId]);
      await ender.signals.signal(child, 'go', 'went');
      await eventually(async () => (await waitingOnLocks()) === 1, "the child's end waiting on the source's row");
      const fork = await forker.client.fork(source.runId, { fromStep: 'notify' });
      // The fork reads the child running (the end has not committed) and parks on it: its park waits on the child's row.
      // Without that lock it parked at once, and the end, which cannot see the fork, never woke it.
      await eventually(
        async () => (await waitingOnLocks()) === 2 || (await forker.client.getRun(fork.runId)).status === 'waiting',
        "the fork's park on the child",
      );
      await locker.query('COMMIT');
      for (const run of [source, fork]) expect(await run.result({ timeout: '10s' })).toEqual(ended);
      expect(await db.count('history', `run_id = $1 AND event = 'parked'`, [fork.runId])).toBe(0);
    } finally {
      await locker.query('ROLLBACK');
    }
  };

  it("awaiting its result: the fork's park on the child waits for that end and is refused; the fork reads the end instead of waiting for ever", () =>
    forkDuringChildEnd(Parent, 'went'));

  it("selecting on it: the fork's park on the child waits for that end and is refused; the fork reads the end instead of waiting for ever", () =>
    forkDuringChildEnd(Selecting, { key: 'kid', value: expect.objectContaining({ status: 'completed', output: 'went' }) }));
});
