import { z } from 'zod';
import {
  ChildEnd,
  defineChannel,
  defineSignal,
  DurableWorkflow,
  Duration,
  NonRetryableError,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { DurableTestApp, eventually, fileApps, uniqueSchema } from '../setup/durable-app';

const Approved = defineSignal('approved', z.object({ by: z.string() }));
const Rejected = defineSignal<string>('rejected');
const Carrier = defineChannel<string>('carrier');

interface DecideInput {
  reminderMs?: number;
  deadline?: Duration;
  /** An instant (ISO) as the deadline. */
  deadlineAt?: string;
  /** After the select, collect what lost: the other signal and the channel's oldest message. */
  collect?: boolean;
}

/** Approved, rejected, a carrier message or a reminder, whichever comes first. */
@Workflow('decide', { signals: [Approved, Rejected], channels: [Carrier] })
class Decide implements DurableWorkflow<DecideInput, unknown> {
  async run(input: DecideInput, ctx: WorkflowContext) {
    const arms = {
      approved: ctx.signal(Approved),
      rejected: ctx.signal(Rejected),
      shipped: ctx.message(Carrier),
      ...(input.reminderMs === undefined ? {} : { reminder: ctx.timer(input.reminderMs) }),
    };
    const deadline = input.deadlineAt === undefined ? input.deadline : new Date(input.deadlineAt);
    const won = await ctx.select('decision', arms, deadline === undefined ? {} : { deadline });
    if (!input.collect) return won;
    // Losing arms consumed nothing: the other signal is still buffered, the message still un-acked.
    const rejected = await ctx.waitForSignal(Rejected);
    const message = await ctx.receive(Carrier);
    return { won: won.key, rejected, message: message.payload };
  }
}

@Workflow('parcel')
class Parcel implements DurableWorkflow<{ ms: number; fail?: boolean }, string> {
  async run(input: { ms: number; fail?: boolean }, ctx: WorkflowContext) {
    await ctx.sleep('transit', input.ms);
    if (input.fail) throw new NonRetryableError('parcel lost');
    return 'delivered';
  }
}

/** A child's end against a cancel signal; the child arm's value is its end, never thrown. */
@Workflow('race-child')
class RaceChild implements DurableWorkflow<{ ms: number; fail?: boolean }, unknown> {
  async run(input: { ms: number; fail?: boolean }, ctx: WorkflowContext) {
    const parcel = await ctx.startChild(Parcel, input, { step: 'parcel' });
    const won = await ctx.select('first', { parcel, cancel: ctx.signal<string>('cancel') });
    if (won.key === 'parcel') {
      const end: ChildEnd<string> = won.value;
      return end.status === 'completed'
        ? { key: won.key, output: end.output }
        : { key: won.key, status: end.status, error: end.error.message };
    }
    return won;
  }
}

/** A child that ends first, then a wait, then a select on the child and a signal: which ended first wins. */
@Workflow('child-then-select')
class ChildThenSelect implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const parcel = await ctx.startChild(Parcel, { ms: 0, fail: true }, { step: 'parcel' });
    await ctx.waitForSignal('ready');
    return (await ctx.select('first', { parcel, ping: ctx.signal<string>('ping') })).key;
  }
}

/** Selects, then fails its first attempt after the winner is journaled: the retry re-runs from the top. */
@Workflow('select-then-crash', { retry: { maxAttempts: 2, initialDelay: 10 } })
class SelectThenCrash implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const won = await ctx.select('decision', { a: ctx.signal<string>('a'), b: ctx.signal<string>('b') });
    const attempt = ctx.attempt;
    if (attempt === 1) {
      await ctx.waitForSignal('crash-now');
      throw new Error('crash after the select');
    }
    return won;
  }
}

/** A select with a timer arm and a deadline, passed by later executions: its sub-checkpoints count as reached. */
@Workflow('select-then-wait')
class SelectThenWait implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const won = await ctx.select('x', { go: ctx.signal<null>('go'), reminder: ctx.timer('1h') }, { deadline: '2h' });
    await ctx.waitForSignal('a');
    const patched = await ctx.patched('after-select'); // first asked by an execution that replays the select
    await ctx.waitForSignal('b');
    return { won: won.key, patched };
  }
}

/** Bad arms, to see the error and that nothing was written. */
@Workflow('bad-select', { retry: { maxAttempts: 1 }, signals: [Approved] })
class BadSelect implements DurableWorkflow<{ which: string }, unknown> {
  async run(input: { which: string }, ctx: WorkflowContext) {
    const arms: Record<string, Record<string, unknown>> = {
      empty: {},
      reserved: { deadline: ctx.timer('1s') },
      notAnArm: { a: 'approved' },
      badTimer: { t: ctx.timer('soon' as never) },
      // A timer listed before a misspelt signal: its instant was journaled, and a retry after the fix kept it.
      undeclared: { reminder: ctx.timer('2h'), ok: ctx.signal('aprove') },
    };
    if (input.which === 'badOption') return ctx.select('bad', { t: ctx.timer('1s') }, { dealine: '1s' } as never);
    return ctx.select('bad', arms[input.which] as never);
  }
}

describe('ctx.select: the first of several things, journaled once', () => {
  const schema = uniqueSchema('sel');
  const { db, boot } = fileApps({
    schema,
    providers: [Decide, Parcel, RaceChild, ChildThenSelect, SelectThenCrash, SelectThenWait, BadSelect],
  });
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await boot({ inlineWaitMs: 100 });
  });

  const parkedOnSelect = (runId: string) =>
    eventually(async () => (await app.client.getRun(runId)).waiting?.kind === 'select', `run ${runId} parked on its select`);

  it('each arm type wins: a signal, a message, a timer, a child (its end as a value), the deadline', async () => {
    const bySignal = await app.client.start(Decide, {});
    await parkedOnSelect(bySignal.runId);
    await app.signals.signal(bySignal.runId, Approved, { by: 'ana' });
    expect(await bySignal.result()).toEqual({ key: 'approved', value: { by: 'ana' } });

    const byMessage = await app.client.start(Decide, {});
    await parkedOnSelect(byMessage.runId);
    await app.signals.send(byMessage.runId, Carrier, 'm1', 'picked up');
    expect(await byMessage.result()).toMatchObject({ key: 'shipped', value: { key: 'm1', seq: 1, payload: 'picked up' } });

    const byTimer = await app.client.start(Decide, { reminderMs: 400 });
    expect(await byTimer.result()).toEqual({ key: 'reminder', value: expect.any(Date) });

    const byDeadline = await app.client.start(Decide, { deadline: '400ms' });
    expect(await byDeadline.result()).toEqual({ key: 'deadline' });

    const byChild = await app.client.start(RaceChild, { ms: 400 });
    expect(await byChild.result()).toEqual({ key: 'parcel', output: 'delivered' });
    const byFailedChild = await app.client.start(RaceChild, { ms: 10, fail: true });
    expect(await byFailedChild.result()).toEqual({ key: 'parcel', status: 'failed', error: 'parcel lost' });
    const byCancel = await app.client.start(RaceChild, { ms: 60_000 });
    await parkedOnSelect(byCancel.runId);
    // A signal no arm waits on leaves it parked: its wake time is not brought forward.
    await app.signals.signal(byCancel.runId, 'unrelated', null);
    expect(await db.count('runs', `id = $1 AND status = 'waiting' AND wake_at IS NULL`, [byCancel.runId])).toBe(1);
    await app.signals.signal(byCancel.runId, 'cancel', 'stop');
    expect(await byCancel.result()).toEqual({ key: 'cancel', value: 'stop' });
    // The losing child keeps running: it was not cancelled by the select.
    expect((await app.client.getRun(`${byCancel.runId}/parcel`)).status).toBe('waiting');
  });

  it('arms already delivered: the earliest delivered wins, not the first listed; the losers stay buffered and un-acked', async () => {
    const run = await app.client.start(Decide, { collect: true }, { delay: '60s' });
    await app.signals.signal(run.runId, Rejected, 'too late');
    await app.signals.send(run.runId, Carrier, 'm1', 'on its way');
    await app.signals.signal(run.runId, Approved, { by: 'ana' });
    await app.client.resume(run.runId); // its delayed start, now
    expect(await run.result()).toEqual({ won: 'rejected', rejected: 'too late', message: 'on its way' });
    const [stored] = await db.query<{ result: string }>(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'select:decision'`, [
      run.runId,
    ]);
    expect(JSON.parse(stored.result)).toMatchObject({ key: 'rejected', value: 'too late' });
  });

  it("a child arm's time is when the child ended, not when its row last changed (a deadline set on the failed child)", async () => {
    const run = await app.client.start(ChildThenSelect, null);
    const child = `${run.runId}/parcel`;
    await eventually(async () => (await db.count('runs', `id = $1 AND status = 'failed'`, [child])) === 1, 'the child failed');
    await eventually(async () => (await app.client.getRun(run.runId)).waiting?.kind === 'signal', 'the run waiting for ready');
    await app.signals.signal(run.runId, 'ping', 'after the child');
    await app.client.setDeadline(child, new Date(Date.now() + 3_600_000)); // a failed run accepts it (before a retry)
    await app.signals.signal(run.runId, 'ready', null);
    expect(await run.result({ timeout: '10s' })).toBe('parcel');
  });

  it('a parked select wakes on a delivery from another instance (no sweeper), through an arm of its reason', async () => {
    const worker = await boot({ sweeper: false });
    const sender = await boot({ sweeper: false, worker: { enabled: false } });
    const run = await worker.client.start(Decide, { reminderMs: 3_600_000 });
    await eventually(async () => (await worker.client.getRun(run.runId)).waiting?.kind === 'select', 'parked');
    const view = await sender.client.getRun(run.runId);
    expect(view.waiting).toMatchObject({
      kind: 'select',
      name: 'decision',
      arms: [
        { arm: 'approved', kind: 'signal', name: 'approved' },
        { arm: 'rejected', kind: 'signal', name: 'rejected' },
        { arm: 'shipped', kind: 'channel', name: 'carrier' },
        { arm: 'reminder', kind: 'timer', until: expect.any(Date) },
      ],
    });
    await sender.signals.send(run.runId, Carrier, 'm1', 'picked up');
    expect(await worker.client.handle(run.runId).result({ timeout: '5s' })).toMatchObject({ key: 'shipped' });
  });

  it('a re-run returns the journaled winner, even when another arm arrived meanwhile', async () => {
    const run = await app.client.start(SelectThenCrash, null);
    await parkedOnSelect(run.runId);
    await app.signals.signal(run.runId, 'a', 'first');
    await eventually(async () => (await app.client.getRun(run.runId)).waiting?.kind === 'signal', 'past the select');
    await app.signals.signal(run.runId, 'b', 'arrived during the downtime');
    await app.signals.signal(run.runId, 'crash-now', null);
    expect(await run.result()).toEqual({ key: 'a', value: 'first' });
    expect((await app.client.getRun(run.runId)).attempt).toBe(2);
  });

  it('a replayed select counts its timer and deadline checkpoints as reached: no unreached warning, a later patched() is taken', async () => {
    const run = await app.client.start(SelectThenWait, null);
    await parkedOnSelect(run.runId);
    await app.signals.signal(run.runId, 'go', null);
    const waitingOn = (name: string) =>
      eventually(async () => {
        const waiting = (await app.client.getRun(run.runId)).waiting;
        return waiting?.kind === 'signal' && waiting.name === name;
      }, `run ${run.runId} waiting for ${name}`);
    await waitingOn('a');
    await app.signals.signal(run.runId, 'a', null);
    await waitingOn('b'); // this execution replayed the select (winner, timer and deadline journaled)
    expect(await db.count('steps', `run_id = $1 AND key LIKE 'select:x%'`, [run.runId])).toBe(3);
    expect((await app.client.getRun(run.runId)).warning).toBeUndefined();
    await app.signals.signal(run.runId, 'b', null);
    expect(await run.result()).toEqual({ won: 'go', patched: true });
    expect((await app.client.getRun(run.runId)).warning).toBeUndefined();
  });

  it('a deadline already past resolves to deadline at once, recorded; bad arms fail with a clear error and write nothing', async () => {
    for (const input of [{ deadlineAt: new Date(Date.now() - 60_000).toISOString() }, { deadline: 0 }]) {
      const atOnce = await app.client.start(Decide, input);
      expect(await atOnce.result()).toEqual({ key: 'deadline' });
      expect(await db.count('steps', `run_id = $1 AND key = 'select:decision'`, [atOnce.runId])).toBe(1);
    }

    const errors: Record<string, RegExp> = {
      empty: /select\("bad"\) needs at least one arm/,
      reserved: /"deadline" is the select's own result/,
      notAnArm: /arm "a" must be ctx\.signal\(…\), ctx\.message\(…\), ctx\.timer\(…\) or a child handle/,
      badTimer: /select\("bad"\) t/,
      undeclared: /Workflow "bad-select" declares no signal named "aprove"/,
      badOption: /select\("bad"\): unknown option dealine; it takes deadline/,
    };
    for (const [which, message] of Object.entries(errors)) {
      const run = await app.client.start(BadSelect, { which });
      await expect(run.result()).rejects.toThrow(message);
      expect({ which, steps: await db.count('steps', `run_id = $1`, [run.runId]) }).toEqual({ which, steps: 0 });
    }
  });
});
