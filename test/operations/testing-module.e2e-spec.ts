import { Injectable } from '@nestjs/common';
import { defineChannel, defineSignal, DurableWorkflow, Step, Workflow, WorkflowContext } from 'nestjs-durable';
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

const Orders = defineChannel<string>('orders');

/** Waits on a channel under a run deadline of an hour: a wait the clock does not move, which the deadline still ends. */
@Workflow('inbox', { channels: [Orders], timeout: '1h', deadlineGrace: '1m' })
class Inbox implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return (await ctx.receive(Orders)).payload;
  }
}

describe('DurableTestingModule: a fake clock and drain() for your own workflow tests', () => {
  let durable: DurableTestingModule;

  beforeAll(async () => {
    durable = await DurableTestingModule.create({ providers: [Reminders, Dunning, Inbox] });
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

  it('a signal before the deadline wins; waitReason is undefined once the run ends', async () => {
    const run = await durable.client.start(Dunning, null);
    await durable.clock.advance('7d');
    await durable.signals.signal(run.runId, Paid, { amount: 10 });
    await durable.drain();
    expect(await durable.waitReason(run.runId)).toBeUndefined();
    expect(await run.result()).toBe('paid');
  });
});
