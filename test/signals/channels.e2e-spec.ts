import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { defineChannel, DurableWorkflow, InvalidPayloadError, UnknownSignalError, Workflow, WorkflowContext } from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const Events = defineChannel('events', z.object({ type: z.enum(['item', 'done']), value: z.number().optional() }));

@Injectable()
class Ledger {
  readonly handled: string[] = [];
  readonly values: Array<[string, number]> = [];
  failOnce = new Set<string>();
  total(runId: string): number {
    return this.values.filter(([id]) => id === runId).reduce((sum, [, value]) => sum + value, 0);
  }
}

/**
 * The consuming loop of the seed: receive → handle in a step keyed by the message → ack, until 'done'.
 * Each message's handling lives in the journal, not in a local variable: after a re-execution the acked
 * messages are gone from receive, so the workflow sums what its handling steps stored.
 */
@Workflow('consumer', { channels: [Events], retry: { maxAttempts: 5, initialDelay: '20ms' } })
class Consumer implements DurableWorkflow<null, number> {
  constructor(private readonly ledger: Ledger) {}
  async run(_: null, ctx: WorkflowContext) {
    for (;;) {
      const message = await ctx.receive(Events);
      if (message.payload.type === 'done') {
        await ctx.ack(Events, message.key);
        return this.ledger.total(ctx.runId);
      }
      await ctx.step(`handle:${message.key}`, () => {
        if (this.ledger.failOnce.delete(message.key)) throw new Error(`handler of ${message.key} failed once`);
        this.ledger.handled.push(`${ctx.runId}:${message.key}:${message.seq}`);
        this.ledger.values.push([ctx.runId, message.payload.value ?? 0]);
      });
      await ctx.ack(Events, message.key);
    }
  }
}

/** consume(): the loop as one primitive, then a park after it (the re-run must not wait on the channel again). */
@Workflow('consume-then-nap', { channels: [Events] })
class ConsumeThenNap implements DurableWorkflow<null, unknown> {
  constructor(private readonly ledger: Ledger) {}
  async run(_: null, ctx: WorkflowContext) {
    const closing = await ctx.consume(
      Events,
      (message) => {
        this.ledger.handled.push(`${ctx.runId}:${message.key}:${message.seq}`);
      },
      { until: (message) => message.payload.type === 'done' },
    );
    await ctx.sleep('after', 600);
    return closing.key;
  }
}

/** consume(), then a plain receive on the same channel: it must get the message after the closing one. */
@Workflow('consume-then-receive', { channels: [Events] })
class ConsumeThenReceive implements DurableWorkflow<null, unknown> {
  constructor(private readonly ledger: Ledger) {}
  async run(_: null, ctx: WorkflowContext) {
    const closing = await ctx.consume(
      Events,
      (message) => {
        this.ledger.handled.push(`${ctx.runId}:${message.key}`);
      },
      { until: (message) => message.payload.type === 'done' },
    );
    const next = await ctx.receive(Events);
    await ctx.ack(Events, next.key);
    return [closing.key, next.key];
  }
}

/** Reads one message from `a` and one from `ab`. */
@Workflow('boundaries')
class Boundaries implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const a = await ctx.receive<string>('a');
    const ab = await ctx.receive<string>('ab');
    return [a.payload, ab.payload];
  }
}

describe('channels: ordered, deduplicated, consumed exactly once', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  let ledger: Ledger;

  beforeAll(async () => {
    t = await startApp({ schema, providers: [Ledger, Consumer, Boundaries, ConsumeThenNap, ConsumeThenReceive] });
    ledger = t.get(Ledger);
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('messages are received in delivery order, each handled once, and an empty channel parks the run', async () => {
    const handle = await t.client.start(Consumer, null);
    await eventually(async () => (await t.client.getRun(handle.runId)).waiting?.kind === 'channel', 'the consumer to park on the channel');
    for (let i = 1; i <= 5; i++) {
      const sent = await t.signals.send(handle.runId, Events, `k${i}`, { type: 'item', value: i });
      expect(sent).toMatchObject({ accepted: true, seq: i, channel: 'events', key: `k${i}` });
    }
    await t.signals.send(handle.runId, Events, 'end', { type: 'done' });
    expect(await handle.result({ timeout: '10s' })).toBe(15);
    expect(ledger.handled.filter((h) => h.startsWith(handle.runId))).toEqual([1, 2, 3, 4, 5].map((i) => `${handle.runId}:k${i}:${i}`));
    expect(await db.count('messages', 'run_id = $1 AND acked_at IS NULL', [handle.runId])).toBe(0);
  });

  it('a re-execution does not see acked messages again: each handled exactly once across retries', async () => {
    const handle = await t.client.start(Consumer, null);
    ledger.failOnce.add('m3');
    for (let i = 1; i <= 4; i++) await t.signals.send(handle.runId, Events, `m${i}`, { type: 'item', value: 10 * i });
    await t.signals.send(handle.runId, Events, 'end', { type: 'done' });
    expect(await handle.result({ timeout: '10s' })).toBe(100);
    expect((await t.client.getRun(handle.runId)).attempt).toBe(2);
    expect(ledger.handled.filter((h) => h.startsWith(handle.runId))).toEqual([1, 2, 3, 4].map((i) => `${handle.runId}:m${i}:${i}`));
  });

  it('send deduplicates by (run, channel, key): a redelivery is accepted: false with the original seq', async () => {
    const handle = await t.client.start(Consumer, null);
    await t.signals.send(handle.runId, Events, 'x', { type: 'item', value: 1 });
    const again = await t.signals.send(handle.runId, Events, 'x', { type: 'item', value: 999 });
    expect(again).toMatchObject({ accepted: false, seq: 1 });
    await t.signals.send(handle.runId, Events, 'end', { type: 'done' });
    expect(await handle.result({ timeout: '10s' })).toBe(1);
  });

  it('concurrent sends get gap-free sequence numbers in commit order', async () => {
    const handle = await t.client.start(Consumer, null);
    const sent = await Promise.all(
      Array.from({ length: 30 }, (_, i) => t.signals.send(handle.runId, Events, `c${i}`, { type: 'item', value: 1 })),
    );
    expect(sent.map((s) => s.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await t.signals.send(handle.runId, Events, 'end', { type: 'done' });
    expect(await handle.result({ timeout: '10s' })).toBe(30);
  });

  it('consume() handles each message once in order, journals its end, and a later re-run does not wait on the channel again', async () => {
    const handle = await t.client.start(ConsumeThenNap, null);
    for (const key of ['c1', 'c2']) await t.signals.send(handle.runId, Events, key, { type: 'item', value: 1 });
    await t.signals.send(handle.runId, Events, 'fin', { type: 'done' });
    expect(await handle.result({ timeout: '10s' })).toBe('fin');
    expect(ledger.handled.filter((h) => h.startsWith(handle.runId))).toEqual([
      `${handle.runId}:c1:1`,
      `${handle.runId}:c2:2`,
      `${handle.runId}:fin:3`,
    ]);
    expect(await db.count('messages', 'run_id = $1 AND acked_at IS NULL', [handle.runId])).toBe(0);
    const parks = await db.query(`SELECT detail->>'kind' AS kind FROM durable.history WHERE run_id = $1 AND event = 'parked' ORDER BY id`, [
      handle.runId,
    ]);
    expect(parks.map((p) => p.kind).pop()).toBe('sleep'); // after the sleep it completed without parking on the channel
  });

  it("a crash between consume()'s closing checkpoint and its ack: the re-execution acks the closing message, and a later receive never gets it again", async () => {
    const handle = await t.client.start(ConsumeThenReceive, null);
    await t.signals.send(handle.runId, Events, 'c1', { type: 'item', value: 1 });
    await t.signals.send(handle.runId, Events, 'fin', { type: 'done' });
    await eventually(
      async () =>
        (await t.client.getRun(handle.runId)).waiting?.kind === 'channel' &&
        (await db.count('messages', `run_id = $1 AND acked_at IS NULL`, [handle.runId])) === 0,
      'consume to close and the run to wait on receive',
    );
    // What the crash leaves: the closing checkpoint is written, the closing message is not acked.
    await db.query(`UPDATE durable.messages SET acked_at = NULL WHERE run_id = $1 AND key = 'fin'`, [handle.runId]);
    await t.signals.send(handle.runId, Events, 'after', { type: 'item', value: 2 });
    expect(await handle.result({ timeout: '10s' })).toEqual(['fin', 'after']);
    expect(ledger.handled.filter((h) => h.startsWith(handle.runId))).toEqual([`${handle.runId}:c1`, `${handle.runId}:fin`]);
    expect(await db.count('messages', 'run_id = $1 AND acked_at IS NULL', [handle.runId])).toBe(0);
  });

  it('channel "a" never sees the messages of channel "ab"', async () => {
    const handle = await t.client.start(Boundaries, null);
    await t.signals.send(handle.runId, 'ab', '1', 'for ab');
    await eventually(async () => (await t.client.getRun(handle.runId)).waiting?.kind === 'channel', 'the run to wait on a');
    expect((await t.client.getRun(handle.runId)).waiting).toMatchObject({ kind: 'channel', channel: 'a' });
    await t.signals.send(handle.runId, 'a', '1', 'for a');
    expect(await handle.result({ timeout: '10s' })).toEqual(['for a', 'for ab']);
  });

  it('an undeclared channel or an invalid message is refused and records nothing', async () => {
    const handle = await t.client.start(Consumer, null);
    const before = await db.count('messages');
    await expect(t.signals.send(handle.runId, 'other', 'k', {})).rejects.toThrow(UnknownSignalError);
    await expect(t.signals.send(handle.runId, Events, 'k', { type: 'nope' } as never)).rejects.toThrow(InvalidPayloadError);
    await expect(t.signals.send(handle.runId, Events, '', { type: 'done' })).rejects.toThrow(/message key/);
    expect(await db.count('messages')).toBe(before);
    await t.client.cancel(handle.runId);
  });
});
