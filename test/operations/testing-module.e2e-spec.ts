import { Injectable } from '@nestjs/common';
import { defineChannel, defineSignal, DurableWorkflow, Step, Workflow, WorkflowContext } from 'nestjs-durable';
import { RunRepository } from 'nestjs-durable/persistence/run.repository';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { DurableTestingModule } from 'nestjs-durable/testing';

/** What a team's own workflow looks like; the test below is what a team's own test looks like. */
@Injectable()
class Reminders {
  readonly sent: string[] = [];
  @Step('remind', { key: (day: string) => day })
  async remind(day: string): Promise<void> {
    this.sent.push(day);
  }
}

const Paid = defineSignal<{ amount: number }>('paid');

@Workflow('dunning')
class Dunning implements DurableWorkflow<null, string> {
  constructor(private readonly reminders: Reminders) {}
  async run(_: null, ctx: WorkflowContext) {
    for (const [day, wait] of [
      ['day-1', '1d'],
      ['day-3', '2d'],
      ['day-7', '4d'],
    ] as const) {
      await ctx.sleep(`until-${day}`, wait);
      await this.reminders.remind(day);
    }
    const paid = await ctx.waitForSignal(Paid, { timeout: '24h' });
    return paid.received ? 'paid' : 'sent to collections';
  }
}

/** Paid, or a reminder in two days: a select whose timer arm the clock moves. */
@Workflow('chase')
class Chase implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return (await ctx.select('paid-or-reminder', { paid: ctx.signal(Paid), reminder: ctx.timer('2d') })).key;
  }
}

const Orders = defineChannel<string>('orders');

/** Waits on a channel under a run deadline of an hour: a wait the clock does not move, which the deadline still ends. */
@Workflow('inbox', { channels: [Orders], timeout: '1h', deadlineGrace: '1m' })
class Inbox implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return (await ctx.receive(Orders)).payload;
  }
}

/** One send a minute: a rate-limited queue. */
@Workflow('paced-send', { queue: 'paced' })
class PacedSend implements DurableWorkflow<string, string> {
  async run(to: string) {
    return `sent to ${to}`;
  }
}

/** The same send, in no queue. */
@Workflow('unpaced-send')
class UnpacedSend implements DurableWorkflow<string, string> {
  async run(to: string) {
    return `sent to ${to}`;
  }
}

describe('DurableTestingModule: a fake clock and drain() for your own workflow tests', () => {
  let durable: DurableTestingModule;

  beforeAll(async () => {
    durable = await DurableTestingModule.create({ providers: [Reminders, Dunning, Inbox, Chase] });
  });
  afterAll(() => durable.close());

  it('fires a week of sleeps in order, then a 24-hour deadline, in milliseconds', async () => {
    const started = Date.now();
    const run = await durable.client.start(Dunning, null);
    expect(await durable.waitReason(run.runId)).toMatchObject({ kind: 'sleep', name: 'until-day-1' });

    await durable.clock.advance('3d');
    expect(durable.get(Reminders).sent).toEqual(['day-1', 'day-3']);
    expect(await durable.waitReason(run.runId)).toMatchObject({ kind: 'sleep', name: 'until-day-7' });

    await durable.clock.advance('4d');
    expect(durable.get(Reminders).sent).toEqual(['day-1', 'day-3', 'day-7']);
    expect(await durable.waitReason(run.runId)).toMatchObject({ kind: 'signal', name: 'paid', deadline: expect.any(Date) });

    await durable.clock.advance('23h');
    expect((await durable.run(run.runId)).status).toBe('waiting');
    await durable.clock.advance('1h');
    expect(await run.result()).toBe('sent to collections');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a wait the clock does not move (a channel's, a child's) still ends at the run's deadline, which the clock brings nearer", async () => {
    const started = Date.now();
    const run = await durable.client.start(Inbox, null);
    expect(await durable.waitReason(run.runId)).toMatchObject({ kind: 'channel' });
    await durable.clock.advance('59m');
    expect((await durable.run(run.runId)).status).toBe('waiting');
    await durable.clock.advance('2m');
    await expect(run.result({ timeout: '5s' })).rejects.toMatchObject({ name: 'RunFailedError' });
    expect((await durable.run(run.runId)).error).toMatchObject({ name: 'DeadlineExceededError' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a select's timer arm comes nearer with the clock, in its wait reason too", async () => {
    const run = await durable.client.start(Chase, null);
    const reminder = async () => {
      const reason = await durable.waitReason(run.runId);
      return reason?.kind === 'select' ? reason.arms.find((arm) => arm.arm === 'reminder')?.until : undefined;
    };
    const first = await reminder();
    expect(first).toBeInstanceOf(Date);
    await durable.clock.advance('1d');
    expect(first!.getTime() - (await reminder())!.getTime()).toBe(86_400_000);
    await durable.clock.advance('1d');
    expect(await run.result()).toBe('reminder');
  });

  it('a signal before the deadline wins; waitReason is undefined once the run ends', async () => {
    const run = await durable.client.start(Dunning, null);
    await durable.clock.advance('7d');
    await durable.signals.signal(run.runId, Paid, { amount: 10 });
    await durable.drain();
    expect(await durable.waitReason(run.runId)).toBeUndefined();
    expect(await run.result()).toBe('paid');
  });
});

describe('DurableTestingModule: the clock moves queues rate windows and debounces too', () => {
  let durable: DurableTestingModule;
  beforeAll(async () => {
    durable = await DurableTestingModule.create({
      providers: [PacedSend, UnpacedSend],
      options: { queues: { paced: { rateLimit: { limit: 1, period: '1m' } }, debounced: {} } },
    });
  });
  afterAll(() => durable.close());

  it('a run held by its rate window: drain() leaves it waiting, and the clock opens the window, one run a minute', async () => {
    const started = Date.now();
    const runs = [];
    for (const to of ['a', 'b', 'c']) runs.push(await durable.client.start(PacedSend, to));
    await durable.drain();
    expect((await durable.run(runs[0].runId)).status).toBe('completed');
    expect(await durable.waitReason(runs[1].runId)).toMatchObject({ kind: 'queue', cause: 'rate' });
    await durable.clock.advance('1m');
    expect((await durable.run(runs[1].runId)).status).toBe('completed');
    expect(await durable.waitReason(runs[2].runId)).toMatchObject({ kind: 'queue', cause: 'rate' });
    await durable.clock.advance('1m');
    expect(await runs[2].result({ timeout: '5s' })).toBe('sent to c');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('drain() leaves out the pending runs of a held-back queue only: a due unqueued run still counts', async () => {
    const idle = await DurableTestingModule.create({
      providers: [PacedSend, UnpacedSend],
      options: { worker: { enabled: false }, queues: { paced: { rateLimit: { limit: 1, period: '1m' } } } },
    });
    try {
      await idle.client.start(UnpacedSend, 'unqueued');
      await idle.client.start(PacedSend, 'queued');
      const runs = idle.get(RunRepository);
      const workflows = ['paced-send', 'unpaced-send'];
      expect(await runs.countDue(workflows, ['paced'])).toBe(1); // the unqueued one: its NULL queue is in no list
      expect(await runs.countDue(workflows, [])).toBe(2);
    } finally {
      await idle.close();
    }
  });

  it('drain() does not count a run whose deadline passed before it began: no claim takes it, the expiry fails it', async () => {
    const idle = await DurableTestingModule.create({ providers: [UnpacedSend], options: { worker: { enabled: false } } });
    try {
      const run = await idle.client.start(UnpacedSend, 'late');
      const runs = idle.get(RunRepository);
      expect(await runs.countDue(['unpaced-send'], [])).toBe(1);
      await idle.client.setDeadline(run.runId, new Date(Date.now() - 1_000)); // a past instant counts as now
      expect(await runs.countDue(['unpaced-send'], [])).toBe(0);
      // Counted, it kept the worker's drain looking for a run no claim takes until the drain gave up.
      await expect(idle.get(DurableWorker).drain(2_000)).resolves.toBeUndefined();
    } finally {
      await idle.close();
    }
  });

  it('a queued run whose deadline the clock passes before its queue admits it is failed by the drain, not admitted', async () => {
    await durable.clock.advance('1m'); // a rate window of its own
    const first = await durable.client.start(PacedSend, 'first');
    const late = await durable.client.start(PacedSend, 'late', { timeout: '30s', timeoutIncludesQueue: true });
    await durable.drain();
    expect((await durable.run(first.runId)).status).toBe('completed');
    expect(await durable.waitReason(late.runId)).toMatchObject({ kind: 'queue', cause: 'rate' });
    await durable.clock.advance('1m'); // the window opens 30 s after the deadline passed
    // Before: admitted as the window opened, it ran past its deadline.
    await expect(late.result({ timeout: '5s' })).rejects.toMatchObject({
      error: { name: 'DeadlineExceededError', message: expect.stringContaining('while it waited in queue "paced", before it began') },
    });
  });

  it('a delayed start whose deadline an operator moved before its start is failed by the drain once the clock passes both, never begun', async () => {
    const run = await durable.client.start(UnpacedSend, 'late', { delay: '1h' });
    await durable.client.setDeadline(run.runId, new Date(Date.now() + 30 * 60_000));
    // Before: it began at its start, past its deadline, and completed.
    await durable.clock.advance('2h');
    await expect(run.result({ timeout: '5s' })).rejects.toMatchObject({
      error: { name: 'DeadlineExceededError', message: expect.stringContaining('while it waited for its delayed start') },
    });
  });

  it("a debounce's cap (maxDelay from its first start) moves with the clock", async () => {
    const debounce = { key: 'k', delay: '1m', maxDelay: '2m' } as const;
    const first = await durable.client.start(PacedSend, 'first', { queue: 'debounced', debounce });
    await durable.clock.advance('50s');
    await durable.client.start(PacedSend, 'second', { queue: 'debounced', debounce });
    await durable.clock.advance('50s');
    await durable.client.start(PacedSend, 'third', { queue: 'debounced', debounce }); // at 1m40s: capped at 2m
    // The cap is stamped in the database's real time, which the test's own seconds shorten: a margin for a busy machine.
    await durable.clock.advance('15s');
    expect((await durable.run(first.runId)).status).not.toBe('completed');
    await durable.clock.advance('10s');
    expect(await first.result({ timeout: '5s' })).toBe('sent to third');
  });

  it("a later start's cap counts from the first start, on the clock too", async () => {
    const first = await durable.client.start(PacedSend, 'first', { queue: 'debounced', debounce: { key: 'later', delay: '1m' } });
    await durable.clock.advance('50s');
    // Its cap is 1m from the first start: 10 s on. Before, the first start's instant stayed where the real clock put it.
    await durable.client.start(PacedSend, 'second', { queue: 'debounced', debounce: { key: 'later', delay: '1m', maxDelay: '1m' } });
    await durable.clock.advance('5s');
    expect((await durable.run(first.runId)).status).not.toBe('completed');
    await durable.clock.advance('10s');
    expect(await first.result({ timeout: '5s' })).toBe('sent to second');
  });
});
