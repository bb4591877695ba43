import { Injectable } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import { z } from 'zod';
import {
  defineSignal,
  DurableWorkflow,
  InvalidPayloadError,
  RunClosedError,
  RunNotFoundError,
  SignalOutcome,
  UnknownSignalError,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const Approval = defineSignal('approval', z.object({ approved: z.boolean(), by: z.string().min(1) }));

class ShipmentDto {
  @IsString() carrier!: string;
  @IsInt() @Min(1) parcels!: number;
}
const Shipped = defineSignal('shipped', ShipmentDto);

@Injectable()
class Effects {
  readonly counts = new Map<string, number>();
  hit(name: string): number {
    const n = (this.counts.get(name) ?? 0) + 1;
    this.counts.set(name, n);
    return n;
  }
}

@Workflow('approve', { signals: [Approval, Shipped] })
class Approve implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const approval = await ctx.waitForSignal(Approval);
    return { approved: approval.approved, by: approval.by };
  }
}

/** Waits for two signals by name (untyped), in order. */
@Workflow('two-names')
class TwoNames implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const a = await ctx.waitForSignal<string>('a');
    const b = await ctx.waitForSignal<string>('b');
    return [a, b];
  }
}

/** Sleeps first (a signal sent meanwhile is buffered), then awaits. */
@Workflow('late-await')
class LateAwait implements DurableWorkflow<{ sleep: number }, unknown> {
  async run(input: { sleep: number }, ctx: WorkflowContext) {
    await ctx.sleep('first', input.sleep);
    return ctx.waitForSignal<string>('go');
  }
}

/** Declares `go` with a schema of its own, where the other workflows here take any `go`. */
const StrictGo = defineSignal('go', z.string().min(3));
@Workflow('strict-go', { signals: [StrictGo] })
class StrictAwait implements DurableWorkflow<null, string> {
  run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal(StrictGo);
  }
}

/** AwaitFor; after the wait a step fails once, so the outcome is replayed in a second execution. */
@Workflow('await-for', { retry: { maxAttempts: 3, initialDelay: '400ms' } })
class AwaitFor implements DurableWorkflow<{ timeout: number }, unknown> {
  constructor(private readonly effects: Effects) {}
  async run(input: { timeout: number }, ctx: WorkflowContext) {
    const outcome: SignalOutcome<string> = await ctx.waitForSignal<string>('answer', { timeout: input.timeout });
    const after = await ctx.step('after', () => new Date());
    if (this.effects.hit(`replay:${ctx.runId}`) === 1) throw new Error('replay the outcome');
    return { outcome, after };
  }
}

describe('signals: at-least-once in, exactly-once applied', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  const providers = [Effects, Approve, TwoNames, LateAwait, AwaitFor, StrictAwait];

  beforeAll(async () => {
    t = await startApp({ schema, providers });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  const parked = (runId: string) => eventually(async () => (await t.client.getRun(runId)).status === 'waiting', `run ${runId} to park`);

  it('a run waiting for a signal parks with the reason; the signal resumes it with its payload', async () => {
    const handle = await t.client.start(Approve, null);
    await parked(handle.runId);
    const run = await t.client.getRun(handle.runId);
    expect(run.waiting).toMatchObject({ kind: 'signal', name: 'approval' });
    const delivery = await t.signals.signal(handle.runId, Approval, { approved: true, by: 'ann' });
    expect(delivery).toMatchObject({ runId: handle.runId, name: 'approval', accepted: true });
    expect(await handle.result({ timeout: '5s' })).toEqual({ approved: true, by: 'ann' });
  });

  it('a redelivery is a no-op (accepted: false) and the first payload wins', async () => {
    const handle = await t.client.start(TwoNames, null); // waits for 'a' first, so 'b' meets an open run
    const first = await t.signals.signal(handle.runId, 'b', 'first');
    const again = await t.signals.signal(handle.runId, 'b', 'second');
    expect([first.accepted, again.accepted]).toEqual([true, false]);
    expect(again.deliveredAt).toEqual(first.deliveredAt);
    await t.signals.signal(handle.runId, 'a', 'ay');
    expect(await handle.result({ timeout: '5s' })).toEqual(['ay', 'first']);
    expect(await db.count('signals', `run_id = $1 AND name = 'b'`, [handle.runId])).toBe(1);
  });

  it('25 concurrent deliveries from two applications accept exactly one', async () => {
    const other = await startApp({ schema, providers, options: { worker: { enabled: false } } });
    try {
      const handle = await t.client.start(TwoNames, null); // stays open: it waits for 'a' first
      const senders = [t.signals, other.signals];
      const deliveries = await Promise.all(Array.from({ length: 25 }, (_, i) => senders[i % 2].signal(handle.runId, 'b', `sender-${i}`)));
      expect(deliveries.filter((d) => d.accepted)).toHaveLength(1);
      const winner = deliveries.findIndex((d) => d.accepted);
      await t.signals.signal(handle.runId, 'a', 'ay');
      expect(await handle.result({ timeout: '5s' })).toEqual(['ay', `sender-${winner}`]);
      expect(await db.count('history', `run_id = $1 AND event = 'signal-delivered'`, [handle.runId])).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('a signal delivered before the run awaits it is buffered and resolves the wait at once', async () => {
    const handle = await t.client.start(LateAwait, { sleep: 600 });
    await parked(handle.runId);
    await t.signals.signal(handle.runId, 'go', 'early');
    expect(await handle.result({ timeout: '5s' })).toBe('early');
    const parks = await db.query(`SELECT detail->>'kind' AS kind FROM durable.history WHERE run_id = $1 AND event = 'parked'`, [
      handle.runId,
    ]);
    expect(parks).toEqual([{ kind: 'sleep' }]);
  });

  it('distinct names wait and resolve independently, whatever the delivery order', async () => {
    const handle = await t.client.start(TwoNames, null);
    await parked(handle.runId);
    await t.signals.signal(handle.runId, 'b', 'bee');
    await eventually(async () => {
      const run = await t.client.getRun(handle.runId);
      return run.status === 'waiting' && run.waiting?.kind === 'signal' && run.waiting.name === 'a';
    }, 'the run to still wait for a');
    await t.signals.signal(handle.runId, 'a', 'ay');
    expect(await handle.result({ timeout: '5s' })).toEqual(['ay', 'bee']);
  });

  it('AwaitFor returns the signal when it comes first', async () => {
    const handle = await t.client.start(AwaitFor, { timeout: 60_000 });
    await parked(handle.runId);
    expect((await t.client.getRun(handle.runId)).waiting).toMatchObject({ kind: 'signal', name: 'answer', deadline: expect.any(Date) });
    await t.signals.signal(handle.runId, 'answer', 'yes');
    expect(((await handle.result({ timeout: '5s' })) as any).outcome).toEqual({ received: true, payload: 'yes' });
  });

  it('AwaitFor returns { received: false } at the deadline, and a signal arriving later never changes that on replay', async () => {
    const handle = await t.client.start(AwaitFor, { timeout: 700 });
    await parked(handle.runId);
    // The timed-out execution failed once after the wait; while it backs off, the signal arrives late.
    await eventually(async () => (await t.client.getRun(handle.runId)).waiting?.kind === 'retry', 'the run to back off after the timeout');
    expect((await t.signals.signal(handle.runId, 'answer', 'too late')).accepted).toBe(true);
    const result = (await handle.result({ timeout: '5s' })) as any;
    expect(result.outcome).toEqual({ received: false });
    const [deadline] = await db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'signal-deadline:answer'`, [
      handle.runId,
    ]);
    const deadlineAt = new Date(JSON.parse(deadline.result).v).getTime();
    expect(result.after.getTime()).toBeGreaterThanOrEqual(deadlineAt);
    expect(result.after.getTime() - deadlineAt).toBeLessThan(1_000);
    // the first execution after the deadline timed out, failed later, and was replayed: still no signal
    expect(t.get(Effects).counts.get(`replay:${handle.runId}`)).toBe(2);
  });

  it('AwaitFor with a deadline inside inlineWaitMs waits in-process and takes a signal sent meanwhile', async () => {
    // An application of its own whose inlineWaitMs holds a deadline long enough for a busy machine's delivery.
    const inline = uniqueSchema();
    const app = await startApp({ schema: inline, providers, options: { inlineWaitMs: 20_000, leaseMs: 60_000 } });
    const inlineDb = new Db(inline);
    try {
      const handle = await app.client.start(AwaitFor, { timeout: 10_000 });
      await eventually(
        async () => (await inlineDb.count('steps', `run_id = $1 AND key = 'signal-deadline:answer'`, [handle.runId])) === 1,
        'the run waiting in-process, its deadline journaled',
      );
      await app.signals.signal(handle.runId, 'answer', 'quick');
      expect(((await handle.result({ timeout: '5s' })) as any).outcome).toEqual({ received: true, payload: 'quick' });
      expect(await inlineDb.count('history', `run_id = $1 AND event = 'parked'`, [handle.runId])).toBe(0);
    } finally {
      await app.close();
      await inlineDb.dropSchema();
    }
  });

  it('refused deliveries name their error and record nothing', async () => {
    const open = await t.client.start(Approve, null);
    await parked(open.runId);
    const done = await t.client.start(TwoNames, null);
    await t.signals.signal(done.runId, 'a', 1);
    await t.signals.signal(done.runId, 'b', 2);
    await done.result();
    const cancelled = await t.client.start(Approve, null);
    await t.client.cancel(cancelled.runId);
    const before = await db.count('signals');
    const historyBefore = await db.count('history');

    await expect(t.signals.signal('no-such-run', 'x', 1)).rejects.toThrow(RunNotFoundError);
    await expect(t.signals.signal(done.runId, 'c', 1)).rejects.toThrow(RunClosedError);
    await expect(t.signals.signal(cancelled.runId, Approval, { approved: true, by: 'x' })).rejects.toThrow(RunClosedError);
    await expect(t.signals.signal(open.runId, 'not-declared', 1)).rejects.toThrow(UnknownSignalError);
    const invalid = await t.signals.signal(open.runId, Approval, { approved: 'yes', by: '' } as never).catch((e) => e);
    expect(invalid).toBeInstanceOf(InvalidPayloadError);
    expect(invalid.issues.map((i: { path: string }) => i.path).sort()).toEqual(['approved', 'by']);
    const dto = await t.signals.signal(open.runId, Shipped, { carrier: 'ups', parcels: 0 }).catch((e) => e);
    expect(dto).toBeInstanceOf(InvalidPayloadError);
    expect(dto.issues).toEqual([{ path: 'parcels', message: 'parcels must not be less than 1' }]);
    await expect(t.signals.signal(open.runId, 'x'.repeat(201), 1)).rejects.toThrow(/at most 200 characters/);

    expect(await db.count('signals')).toBe(before);
    expect(await db.count('history')).toBe(historyBefore);
    expect((await t.signals.signal(open.runId, Shipped, { carrier: 'ups', parcels: 2 })).accepted).toBe(true);
  });

  it("a signal name that workflows validate differently is checked against the schema of the run's own workflow", async () => {
    const strict = await t.client.start(StrictAwait, null);
    const loose = await t.client.start(LateAwait, { sleep: 0 });
    await Promise.all([parked(strict.runId), parked(loose.runId)]);
    await expect(t.signals.signal(strict.runId, 'go', 'ab')).rejects.toThrow(InvalidPayloadError);
    expect((await t.signals.signal(loose.runId, 'go', 'ab')).accepted).toBe(true);
    expect((await t.signals.signal(strict.runId, 'go', 'abc')).accepted).toBe(true);
    expect([await strict.result(), await loose.result()]).toEqual(['abc', 'ab']);
  });

  it('payloads Postgres jsonb would refuse (\\u0000, lone surrogates) round-trip intact', async () => {
    const handle = await t.client.start(TwoNames, null);
    const odd = 'nul\u0000 and \ud800 lone';
    await t.signals.signal(handle.runId, 'a', odd);
    await t.signals.signal(handle.runId, 'b', { nested: odd });
    expect(await handle.result({ timeout: '5s' })).toEqual([odd, { nested: odd }]);
  });

  it('the AwaitFor deadline survives an application restart: the run ends at the original instant', async () => {
    const first = await startApp({ schema, providers: [Effects, AwaitFor] });
    const handle = await first.client.start(AwaitFor, { timeout: 1_500 });
    await eventually(async () => (await first.client.getRun(handle.runId)).status === 'waiting', 'the wait to park');
    await first.close();
    await new Promise((r) => setTimeout(r, 500));
    const second = await startApp({ schema, providers: [Effects, AwaitFor] });
    try {
      const result = (await second.client.handle(handle.runId).result({ timeout: '10s' })) as any;
      expect(result.outcome).toEqual({ received: false });
      const [deadline] = await db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'signal-deadline:answer'`, [
        handle.runId,
      ]);
      const deadlineAt = new Date(JSON.parse(deadline.result).v).getTime();
      const [started] = await db.query(`SELECT created_at FROM durable.runs WHERE id = $1`, [handle.runId]);
      expect(deadlineAt - started.created_at.getTime()).toBeGreaterThanOrEqual(1_490);
      expect(deadlineAt - started.created_at.getTime()).toBeLessThan(1_700);
      expect(result.after.getTime() - deadlineAt).toBeLessThan(1_000);
    } finally {
      await second.close();
    }
  });

  /** A run's timed wait whose deadline passes while no instance executes it, then a signal delivered, then the run executed again. */
  const lateSignal = async (format: number, outcome: unknown) => {
    const own = uniqueSchema(); // no other instance here executes the run while it is down
    const ownDb = new Db(own);
    const apps: DurableTestApp[] = [];
    try {
      const first = await startApp({ schema: own, providers: [Effects, AwaitFor] });
      apps.push(first);
      const handle = await first.client.start(AwaitFor, { timeout: 3_000 });
      await eventually(async () => (await first.client.getRun(handle.runId)).waiting?.kind === 'signal', 'the wait to park');
      await apps.splice(apps.indexOf(first), 1)[0].close();
      // Closed before its deadline: no instance decided the wait (a loaded machine could have let the first time it out).
      expect(await ownDb.count('steps', `run_id = $1 AND key LIKE '%timed-out'`, [handle.runId])).toBe(0);
      await ownDb.query(`UPDATE durable.runs SET key_format = $2 WHERE id = $1`, [handle.runId, format]);
      const sender = await startApp({ schema: own, providers: [Effects, AwaitFor], options: { worker: { enabled: false } } });
      apps.push(sender);
      await eventually(
        async () => (await ownDb.query(`SELECT 1 FROM durable.runs WHERE id = $1 AND wake_at < now()`, [handle.runId])).length > 0,
        'the deadline to pass while no instance executes the run',
      );
      expect(await sender.signals.signal(handle.runId, 'answer', 'late')).toMatchObject({ accepted: true });
      const second = await startApp({ schema: own, providers: [Effects, AwaitFor] });
      apps.push(second);
      expect(((await second.client.handle(handle.runId).result({ timeout: '10s' })) as any).outcome).toEqual(outcome);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await ownDb.dropSchema();
    }
  };

  it('the AwaitFor deadline is the instant a run executing again after it races: a signal delivered after it loses', () =>
    lateSignal(3, { received: false }));

  it('a run of the format before (2, in flight across the upgrade) keeps its rule: the signal delivered after its deadline wins', () =>
    lateSignal(2, { received: true, payload: 'late' }));
});
