import { Injectable } from '@nestjs/common';
import {
  CancelledError,
  DurableWorkflow,
  InvalidArgumentError,
  InvalidPayloadError,
  InvalidTransitionError,
  NonRetryableError,
  RunConflictError,
  RunFailedError,
  RunNotFoundError,
  Workflow,
  WorkflowContext,
  WorkflowNotFoundError,
} from 'nestjs-durable';
import { generatedRunId } from 'nestjs-durable/client/run-id';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Injectable()
class Switches {
  failing = true;
  calls = 0;
}

@Workflow('echo')
class Echo implements DurableWorkflow<unknown, unknown> {
  async run(input: unknown) {
    return input;
  }
}

@Workflow('other')
class Other implements DurableWorkflow<unknown, string> {
  async run() {
    return 'other';
  }
}

@Workflow('backoff', { retry: { maxAttempts: 3, initialDelay: '400ms', backoffFactor: 2 } })
class Backoff implements DurableWorkflow<null, number> {
  async run(_: null, ctx: WorkflowContext) {
    if (ctx.attempt < 3) throw new Error(`outage ${ctx.attempt}`);
    return ctx.attempt;
  }
}

@Workflow('exhausted', { retry: { maxAttempts: 2, initialDelay: '10ms' } })
class Exhausted implements DurableWorkflow<null, never> {
  async run(): Promise<never> {
    throw new TypeError('always broken');
  }
}

@Workflow('permanent-run', { retry: { maxAttempts: 5, initialDelay: '10ms' } })
class PermanentRun implements DurableWorkflow<null, never> {
  async run(): Promise<never> {
    throw new NonRetryableError('bad order');
  }
}

@Workflow('until-fixed', { retry: { maxAttempts: 1 } })
class UntilFixed implements DurableWorkflow<null, string> {
  constructor(private readonly switches: Switches) {}
  async run(_: null, ctx: WorkflowContext) {
    const first = await ctx.step('first', () => ++this.switches.calls);
    await ctx.step('gate', () => {
      if (this.switches.failing) throw new NonRetryableError('gate closed');
    });
    return `first=${first}`;
  }
}

@Workflow('slow')
class Slow implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.sleep('long', '1h');
    return 'woke';
  }
}

describe('runs: starting, reading, listing, cancelling and retrying', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, providers: [Switches, Echo, Other, Backoff, Exhausted, PermanentRun, UntilFixed, Slow] });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('starts by class or by name and returns the output through result()', async () => {
    expect(await (await t.client.start(Echo, { a: 1 })).result()).toEqual({ a: 1 });
    expect(await (await t.client.start<unknown, unknown>('echo', [1, 2])).result()).toEqual([1, 2]);
  });

  it('a run started without an id gets a time-ordered UUID (version 7): later starts sort after earlier ones', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.client.start(Echo, i)).runId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    const stored = await db.query<{ id: string }>('SELECT id FROM durable.runs WHERE id = ANY($1) ORDER BY id', [ids]);
    expect(stored.map((r) => r.id)).toEqual(ids);
    // Within one millisecond too: a burst of ids, most of them made in the same millisecond, keeps its order.
    const burst = Array.from({ length: 2_000 }, generatedRunId);
    expect(new Set(burst.map((id) => id.slice(0, 13))).size).toBeLessThan(burst.length / 2);
    expect([...burst].sort()).toEqual(burst);
  });

  it('start with an existing runId returns that run with created: false and starts nothing', async () => {
    const first = await t.client.start(Echo, 'one', { runId: 'order-123' });
    const again = await t.client.start(Echo, 'two', { runId: 'order-123' });
    expect([first.created, again.created]).toEqual([true, false]);
    expect(await again.result()).toBe('one');
    expect(await db.count('runs', 'id = $1', ['order-123'])).toBe(1);
    expect(await db.count('history', `run_id = $1 AND event = 'started'`, ['order-123'])).toBe(1);
  });

  it('start with an existing runId of another workflow throws RunConflictError', async () => {
    await t.client.start(Echo, 1, { runId: 'conflict-1' });
    await expect(t.client.start(Other, null, { runId: 'conflict-1' })).rejects.toThrow(RunConflictError);
  });

  it('bad input to start names its error and writes nothing', async () => {
    const before = await db.count('runs');
    await expect(t.client.start('no-such-workflow', {})).rejects.toThrow(WorkflowNotFoundError);
    await expect(t.client.start(Echo, { f: () => 1 })).rejects.toThrow(InvalidPayloadError);
    await expect(t.client.start(Echo, 1, { runId: '' })).rejects.toThrow(InvalidArgumentError);
    await expect(t.client.start(Echo, 1, { runId: 'x'.repeat(201) })).rejects.toThrow(InvalidArgumentError);
    expect(await db.count('runs')).toBe(before);
  });

  it('getRun of an unknown run throws RunNotFoundError, and so do the operator actions', async () => {
    await expect(t.client.getRun('nope')).rejects.toThrow(RunNotFoundError);
    await expect(t.client.cancel('nope')).rejects.toThrow(RunNotFoundError);
    await expect(t.client.retry('nope')).rejects.toThrow(RunNotFoundError);
    await expect(t.client.resume('nope')).rejects.toThrow(RunNotFoundError);
  });

  it('a failed execution backs off parked as waiting with reason retry, and the next attempt runs after the delay', async () => {
    const handle = await t.client.start(Backoff, null);
    const waiting = await eventually(async () => {
      const run = await t.client.getRun(handle.runId);
      return run.status === 'waiting' && run;
    }, 'the run to back off');
    expect(waiting.waiting).toMatchObject({ kind: 'retry', error: { name: 'Error', message: 'outage 1' } });
    if (waiting.waiting?.kind !== 'retry') throw new Error('unreachable');
    expect(waiting.waiting.until.getTime() - waiting.updatedAt.getTime()).toBeGreaterThanOrEqual(350);
    expect(await handle.result({ timeout: '10s' })).toBe(3);
    const events = (await db.query(`SELECT event FROM durable.history WHERE run_id = $1 ORDER BY id`, [handle.runId])).map((r) => r.event);
    expect(events.filter((e) => e === 'retry-scheduled')).toHaveLength(2);
  });

  it('a run that exhausts its attempts fails with the last error; a NonRetryableError fails it at once', async () => {
    const exhausted = await t.client.start(Exhausted, null);
    await expect(exhausted.result()).rejects.toMatchObject({ error: { name: 'TypeError', message: 'always broken' } });
    expect((await t.client.getRun(exhausted.runId)).attempt).toBe(2);
    const permanent = await t.client.start(PermanentRun, null);
    await expect(permanent.result()).rejects.toThrow(RunFailedError);
    expect((await t.client.getRun(permanent.runId)).attempt).toBe(1);
  });

  it('retry runs a failed run from its checkpoints and clears its stored permanent step failures', async () => {
    const switches = t.get(Switches);
    const handle = await t.client.start(UntilFixed, null);
    await expect(handle.result()).rejects.toThrow('gate closed');
    switches.failing = false;
    await t.client.retry(handle.runId, { actor: 'alice' });
    expect(await handle.result({ timeout: '10s' })).toBe('first=1');
    expect(switches.calls).toBe(1);
    const [retried] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'retried'`, [handle.runId]);
    expect(retried).toEqual({ actor: 'alice', detail: { clearedSteps: ['gate'] } });
    await expect(t.client.retry(handle.runId)).rejects.toThrow(InvalidTransitionError);
  });

  it('cancel ends a waiting run at once; result() rejects with CancelledError; a second cancel is an invalid transition', async () => {
    const handle = await t.client.start(Slow, null);
    await eventually(async () => (await handle.status()) === 'waiting', 'the run to park');
    await t.client.cancel(handle.runId, 'customer left', { actor: 'bob' });
    await expect(handle.result()).rejects.toThrow(CancelledError);
    const run = await t.client.getRun(handle.runId);
    expect(run.status).toBe('cancelled');
    expect(run.finishedAt).toBeInstanceOf(Date);
    await expect(t.client.cancel(handle.runId)).rejects.toThrow(InvalidTransitionError);
    const [row] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'cancelled'`, [handle.runId]);
    expect(row).toEqual({ actor: 'bob', detail: { reason: 'customer left' } });
  });

  it('listRuns pages newest first with a keyset cursor and filters by status, workflow and wait kind', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await t.client.start(Other, null, { runId: `page-${i}` })).runId);
    await Promise.all(ids.map((id) => t.client.handle(id).result()));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.client.listRuns({ workflow: 'other', limit: 3, cursor });
      expect(page.runs.length).toBeLessThanOrEqual(3);
      seen.push(...page.runs.map((r) => r.runId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const waiting = await t.client.start(Slow, null);
    await eventually(async () => (await waiting.status()) === 'waiting', 'the run to park');
    const bySleep = await t.client.listRuns({ waitingFor: 'sleep' });
    expect(bySleep.runs.map((r) => r.runId)).toContain(waiting.runId);
    expect(bySleep.runs.every((r) => r.status === 'waiting' && r.waiting?.kind === 'sleep')).toBe(true);
    const completed = await t.client.listRuns({ status: ['completed'], workflow: 'other' });
    expect(completed.runs).toHaveLength(7);
  });

  it('listRuns refuses a bad filter with a clear error', async () => {
    await expect(t.client.listRuns({ status: 'sleeping' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(t.client.listRuns({ limit: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(t.client.listRuns({ cursor: '1; DROP TABLE runs' })).rejects.toThrow(InvalidArgumentError);
  });
});
