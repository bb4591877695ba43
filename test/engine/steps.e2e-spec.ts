import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  DurableWorkflow,
  NonRetryableError,
  RunFailedError,
  Step,
  StepResultMismatchError,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** Counts side effects by name, so a test can see what ran and how often. */
@Injectable()
class Effects {
  readonly calls = new Map<string, number>();
  hit(name: string): number {
    const n = (this.calls.get(name) ?? 0) + 1;
    this.calls.set(name, n);
    return n;
  }
  count(name: string): number {
    return this.calls.get(name) ?? 0;
  }
}

/** A step on an ordinary provider, not on a workflow. */
@Injectable()
class Payments {
  constructor(private readonly effects: Effects) {}
  @Step('charge-card')
  async charge(amount: number): Promise<{ amount: number; at: Date }> {
    this.effects.hit('charge');
    return { amount, at: new Date('2026-01-02T03:04:05.000Z') };
  }
  @Step('outer')
  async outer(): Promise<number> {
    this.effects.hit('outer');
    return (await this.inner()) + 1;
  }
  @Step('inner')
  async inner(): Promise<number> {
    this.effects.hit('inner');
    return 41;
  }
}

const fast = { maxAttempts: 3, initialDelay: '10ms' as const };

@Workflow('memoize', { retry: fast })
class Memoize implements DurableWorkflow<{ failFirst: boolean }, unknown> {
  constructor(
    private readonly payments: Payments,
    private readonly effects: Effects,
  ) {}
  async run(input: { failFirst: boolean }, ctx: WorkflowContext) {
    const receipt = await this.payments.charge(42);
    const inline = await ctx.step('inline', () => {
      this.effects.hit('inline');
      return new Map([['k', 1n]]);
    });
    const nested = await this.payments.outer();
    if (input.failFirst && ctx.attempt === 1) throw new Error('transient outage');
    return { receipt, inline, nested, attempt: ctx.attempt };
  }
}

@Workflow('keys', { retry: fast })
class Keys implements DurableWorkflow<null, string[]> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push(await ctx.step('repeat', () => `r${this.effects.hit('repeat')}`));
    for (const id of ['a', 'b']) seen.push(await this.byKey(id));
    if (ctx.attempt === 1) throw new Error('replay me');
    return seen;
  }
  @Step('item', { key: (id: string) => id })
  async byKey(id: string): Promise<string> {
    this.effects.hit(`item:${id}`);
    return `item-${id}`;
  }
}

/** NonRetryableError of a second copy of the library (two installs in a monorepo): another class, of the same code. */
let OtherCopysNonRetryable!: typeof NonRetryableError;
jest.isolateModules(() => {
  OtherCopysNonRetryable = (require('nestjs-durable/errors') as { NonRetryableError: typeof NonRetryableError }).NonRetryableError;
});

/** Its step throws a NonRetryableError of this copy of the library, or of another (input `other-copy`). */
@Workflow('permanent', { retry: fast })
class Permanent implements DurableWorkflow<'this-copy' | 'other-copy', string> {
  constructor(private readonly effects: Effects) {}
  async run(copy: 'this-copy' | 'other-copy', ctx: WorkflowContext) {
    try {
      await ctx.step('declined', () => {
        this.effects.hit(`declined:${copy}`);
        throw new (copy === 'this-copy' ? NonRetryableError : OtherCopysNonRetryable)('card declined');
      });
    } catch (error) {
      this.effects.hit(`caught:${copy}:${(error as Error).message}`);
    }
    if (ctx.attempt === 1) throw new Error('replay me');
    return 'handled';
  }
}

@Workflow('retryable-step', { retry: fast })
class RetryableStep implements DurableWorkflow<null, string> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('flaky', () => {
      // A code of the library's alone does not make an error the library's (its brand does): retried.
      if (this.effects.hit('flaky') < 2) throw Object.assign(new Error('flaky once'), { code: 'NON_RETRYABLE' });
      return 'ok';
    });
  }
}

/** Fails for good in its step `charge`, with a message long enough that the stack is capped. */
@Workflow('fails-in-step', { retry: { maxAttempts: 1 } })
class FailsInStep implements DurableWorkflow<null, never> {
  async run(_: null, ctx: WorkflowContext): Promise<never> {
    return ctx.step('charge', () => {
      throw new Error(`card declined ${'x'.repeat(5_000)}`);
    });
  }
}

@Workflow('step-retry', { retry: { maxAttempts: 1 } })
class StepRetry implements DurableWorkflow<null, number> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step(
      'in-process',
      () => {
        const n = this.effects.hit('in-process');
        if (n < 3) throw new Error(`try ${n}`);
        return n;
      },
      { retry: { maxAttempts: 3, initialDelay: '5ms' } },
    );
  }
}

@Workflow('unserializable', { retry: fast })
class Unserializable implements DurableWorkflow<null, unknown> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('returns-function', () => {
      this.effects.hit('returns-function');
      return { callback: () => 1 };
    });
  }
}

@Workflow('schema-check', { retry: fast })
class SchemaCheck implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const value = await ctx.step('shape', () => ({ total: 10 }), { schema: z.object({ total: z.number() }) });
    if (ctx.attempt === 1) throw new Error('replay me');
    return value;
  }
}

/** Charges one card twice at once (a Promise.all over an order's lines that names one card twice). */
@Workflow('same-key-at-once', { retry: { maxAttempts: 1 } })
class SameKeyAtOnce implements DurableWorkflow<null, unknown[]> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    const charge = () =>
      ctx.step(
        'card',
        async () => {
          const n = this.effects.hit('card');
          await new Promise((resolve) => setTimeout(resolve, 20)); // both calls are in flight together
          return { charged: n };
        },
        { key: () => 'card-1' },
      );
    return Promise.all([charge(), charge()]);
  }
}

/** A step whose `key` option (given as input: which mistake) gives no usable key. */
@Workflow('bad-step-key', { retry: { maxAttempts: 3, initialDelay: '10ms' } })
class BadStepKey implements DurableWorkflow<string, string> {
  constructor(private readonly effects: Effects) {}
  async run(mistake: string, ctx: WorkflowContext) {
    const keys: Record<string, () => unknown> = {
      undefined: () => (({}) as { id?: string }).id, // a field read from the wrong object
      empty: () => '',
      nul: () => 'a\u0000b',
      long: () => 'k'.repeat(1_001),
      nullproto: () => Object.create(null), // what querystring.parse gives: no String() of it
      throws: () => {
        throw new Error('no id on this item');
      },
    };
    return ctx.step('effect', () => `${this.effects.hit(`bad-key-${mistake}`)}`, { key: keys[mistake] as () => string });
  }
}

/** An inline step whose retry policy is invalid: the run fails, and a fallback never sees a journaled failure. */
@Workflow('bad-step-retry', { retry: { maxAttempts: 1 } })
class BadStepRetry implements DurableWorkflow<null, string> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('guarded', () => `${this.effects.hit('guarded')}`, { retry: { maxAttempts: 0 } });
  }
}

/** One step fails the run at once while the other waits out its backoff. */
@Workflow('fails-during-backoff', { retry: { maxAttempts: 1 } })
class FailsDuringBackoff implements DurableWorkflow<null, unknown> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    return Promise.all([
      ctx.step(
        'patient',
        () => {
          this.effects.hit('patient');
          throw new Error('try again');
        },
        { retry: { maxAttempts: 2, initialDelay: '60s' } }, // the run's end does not wait it out
      ),
      ctx.step('fatal', async () => {
        await new Promise((resolve) => setTimeout(resolve, 20)); // after patient's first failure
        throw new NonRetryableError('declined');
      }),
    ]);
  }
}

/** Holds a step waiting out its retry's backoff while the run parks on a signal; awaits it once the signal came. */
@Workflow('parks-during-backoff')
class ParksDuringBackoff implements DurableWorkflow<null, string> {
  constructor(private readonly effects: Effects) {}
  async run(_: null, ctx: WorkflowContext) {
    const charged = ctx.step(
      'charge',
      () => {
        if (this.effects.hit('held-charge') === 1) throw new Error('try again');
        return 'charged';
      },
      { retry: { maxAttempts: 2, initialDelay: '60s' } },
    );
    await ctx.waitForSignal('go');
    return charged;
  }
}

describe('steps: memoization by checkpoint key', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  let effects: Effects;

  beforeAll(async () => {
    t = await startApp({
      schema,
      providers: [
        Effects,
        Payments,
        Memoize,
        Keys,
        Permanent,
        RetryableStep,
        StepRetry,
        FailsInStep,
        Unserializable,
        SchemaCheck,
        SameKeyAtOnce,
        BadStepKey,
        BadStepRetry,
        FailsDuringBackoff,
        ParksDuringBackoff,
      ],
    });
    effects = t.get(Effects);
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('a step that returned is not run again when the run re-executes; its stored result is returned', async () => {
    const handle = await t.client.start(Memoize, { failFirst: true });
    const output = (await handle.result({ timeout: '10s' })) as any;
    expect(output.attempt).toBe(2);
    expect(effects.count('charge')).toBe(1);
    expect(effects.count('inline')).toBe(1);
    expect(output.receipt).toEqual({ amount: 42, at: new Date('2026-01-02T03:04:05.000Z') });
    expect(output.receipt.at).toBeInstanceOf(Date);
    expect(output.inline).toEqual(new Map([['k', 1n]]));
  });

  it('a step called from inside another step runs as plain code, with no checkpoint of its own', async () => {
    const handle = await t.client.start(Memoize, { failFirst: false });
    expect(((await handle.result()) as any).nested).toBe(42);
    const keys = (await db.query(`SELECT key FROM durable.steps WHERE run_id = $1 ORDER BY key`, [handle.runId])).map((r) => r.key);
    expect(keys).toEqual(['charge-card', 'inline', 'outer']);
  });

  it('a @Step method called outside any run is a plain method call', async () => {
    const before = effects.count('charge');
    await t.get(Payments).charge(1);
    await t.get(Payments).charge(1);
    expect(effects.count('charge')).toBe(before + 2);
  });

  it('repeated names get name#k keys and the key option gives name:key, stable across re-executions', async () => {
    const handle = await t.client.start(Keys, null);
    expect(await handle.result()).toEqual(['r1', 'r2', 'r3', 'item-a', 'item-b']);
    const keys = (await db.query(`SELECT key FROM durable.steps WHERE run_id = $1 ORDER BY key`, [handle.runId])).map((r) => r.key);
    expect(keys).toEqual(['item:a', 'item:b', 'repeat', 'repeat#2', 'repeat#3']);
    expect(effects.count('repeat')).toBe(3);
    expect(effects.count('item:a')).toBe(1);
  });

  it('a NonRetryableError is stored and thrown again on replay without running the step, one of another copy of the library too', async () => {
    expect(new OtherCopysNonRetryable('') instanceof NonRetryableError).toBe(false); // what made it retried
    for (const copy of ['this-copy', 'other-copy'] as const) {
      const handle = await t.client.start(Permanent, copy);
      expect(await handle.result()).toBe('handled');
      expect(effects.count(`declined:${copy}`)).toBe(1); // another copy's ran again on the replay before: not known as one
      expect(effects.count(`caught:${copy}:card declined`)).toBe(2);
      const [step] = await db.query(`SELECT outcome, error FROM durable.steps WHERE run_id = $1`, [handle.runId]);
      expect(step).toEqual({
        outcome: 'error',
        error: {
          name: 'NonRetryableError',
          message: 'card declined',
          step: 'declined',
          stack: expect.stringContaining('steps.e2e-spec.ts'),
        },
      });
    }
  });

  it("a failed run stores the step it failed in and the error's stack, capped, where it was first thrown", async () => {
    const handle = await t.client.start(FailsInStep, null);
    await expect(handle.result({ timeout: '10s' })).rejects.toThrow(/card declined/);
    const { error } = await t.client.getRun(handle.runId);
    expect(error).toMatchObject({ name: 'Error', step: 'charge' });
    expect(error!.stack).toMatch(/^Error: card declined x+/);
    expect(error!.stack).toMatch(/… \(\d+ more characters\)$/);
    expect(error!.stack!.length).toBeLessThan(4_100);
  });

  it('any other error is not stored: the step runs again on the next attempt', async () => {
    const handle = await t.client.start(RetryableStep, null);
    expect(await handle.result()).toBe('ok');
    expect(effects.count('flaky')).toBe(2);
    expect((await t.client.getRun(handle.runId)).attempt).toBe(2);
  });

  it('a step retry policy retries in-process before the error reaches the run', async () => {
    const handle = await t.client.start(StepRetry, null);
    expect(await handle.result()).toBe(3);
    expect((await t.client.getRun(handle.runId)).attempt).toBe(1);
  });

  it('a result that cannot be serialized fails the step at once with an error naming the step', async () => {
    const handle = await t.client.start(Unserializable, null);
    await expect(handle.result()).rejects.toThrow(RunFailedError);
    const run = await t.client.getRun(handle.runId);
    expect(run.error?.name).toBe('SerializationError');
    expect(run.error?.message).toContain('returns-function');
    expect(run.error?.message).toContain('$.callback is a function');
    expect(effects.count('returns-function')).toBe(1);
  });

  it('a stored result that no longer fits the step schema fails the run with StepResultMismatchError', async () => {
    const handle = await t.client.start(SchemaCheck, null);
    expect(await handle.result()).toEqual({ total: 10 });
    // the shape stored by an older deploy, read by code that declares a schema for it:
    await db.query(`UPDATE durable.steps SET result = $2 WHERE run_id = $1 AND key = 'shape'`, [
      handle.runId,
      JSON.stringify({ total: 'ten' }),
    ]);
    await db.query(`UPDATE durable.runs SET status = 'failed' WHERE id = $1`, [handle.runId]);
    await t.client.retry(handle.runId);
    await expect(t.client.handle(handle.runId).result()).rejects.toThrow(RunFailedError);
    const run = await t.client.getRun(handle.runId);
    expect(run.error?.name).toBe(StepResultMismatchError.name);
    expect(run.error?.message).toContain('"shape"');
  });

  it('a keyed step called twice at once with one key runs once; both calls get its outcome', async () => {
    const handle = await t.client.start(SameKeyAtOnce, null);
    expect(await handle.result({ timeout: '5s' })).toEqual([{ charged: 1 }, { charged: 1 }]);
    expect(effects.count('card')).toBe(1);
  });

  it('a step whose key option gives no usable key (undefined, empty, a NUL, too long) or throws fails the run with InvalidArgumentError naming the step; the step never runs', async () => {
    for (const [mistake, says] of [
      ['undefined', 'got undefined'],
      ['empty', 'got 0 bytes'],
      ['nul', 'without NUL'],
      ['long', 'got 1001 bytes'],
      ['nullproto', 'got {}'],
      ['throws', 'threw: no id on this item'],
    ]) {
      const handle = await t.client.start(BadStepKey, mistake);
      await expect(handle.result({ timeout: '5s' })).rejects.toThrow(RunFailedError);
      const run = await t.client.getRun(handle.runId);
      expect([run.error?.name, run.attempt]).toEqual(['InvalidArgumentError', 1]); // not retried: a mistake in the code
      expect(run.error?.message).toContain('step "effect"');
      expect(run.error?.message).toContain(says);
      expect(effects.count(`bad-key-${mistake}`)).toBe(0);
    }
  });

  it("an inline step's invalid retry policy fails the run before the step runs, and journals no failure for it", async () => {
    const handle = await t.client.start(BadStepRetry, null);
    await expect(handle.result({ timeout: '5s' })).rejects.toThrow(/retry\.maxAttempts must be a whole number >= 1/);
    expect(effects.count('guarded')).toBe(0);
    expect(await db.count('steps', 'run_id = $1', [handle.runId])).toBe(0);
  });

  it('a run in flight that journaled a key before keys were checked (an empty one) replays it', async () => {
    const id = 'journaled-empty-key';
    // One statement: a claim between two would execute the run before its step was journaled.
    await db.query(
      `WITH run AS (
         INSERT INTO durable.runs (id, workflow, status, input, wake_at) VALUES ($1, 'bad-step-key', 'pending', '"empty"', now()) RETURNING id, run_day
       )
       INSERT INTO durable.steps (run_id, run_day, key, kind, outcome, result) SELECT id, run_day, 'effect:', 'step', 'ok', '"journaled"' FROM run`,
      [id],
    );
    expect(await t.client.handle(id).result({ timeout: '5s' })).toBe('journaled');
    expect(effects.count('bad-key-empty')).toBe(0);
  });

  it('a step waiting out its backoff when the run fails is not called again, and the run ends without waiting the backoff out', async () => {
    const handle = await t.client.start(FailsDuringBackoff, null);
    await expect(handle.result({ timeout: '5s' })).rejects.toThrow('declined');
    expect(effects.count('patient')).toBe(1);
  });

  it('a step held unawaited in its backoff when the run parks on another call ends without an unhandled rejection; the re-execution runs it again', async () => {
    const handle = await t.client.start(ParksDuringBackoff, null);
    await eventually(async () => (await t.client.getRun(handle.runId)).status === 'waiting', 'parked on go');
    await t.signals.signal(handle.runId, 'go', null);
    // Before: the parked execution's step threw its error out of the backoff with nobody awaiting it yet, an unhandled
    // rejection (which stops a Node process; jest fails the test with it).
    expect(await handle.result({ timeout: '10s' })).toBe('charged');
    expect(effects.count('held-charge')).toBe(2);
  });
});
