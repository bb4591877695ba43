import { Injectable } from '@nestjs/common';
import {
  ChildWorkflowFailedError,
  DurableWorkflow,
  InvalidTransitionError,
  NonRetryableError,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { JournalRepository, StoredChild } from 'nestjs-durable/persistence/journal.repository';
import { WakeBus } from 'nestjs-durable/runtime/wake-bus';
import { Journal } from 'nestjs-durable/runtime/journal';
import { Client } from 'pg';
import { databaseUrl, Db, DurableTestApp, eventually, fileApps, startApp, uniqueSchema } from '../setup/durable-app';

@Injectable()
class Counter {
  readonly counts = new Map<string, number>();
  hit(name: string): number {
    const n = (this.counts.get(name) ?? 0) + 1;
    this.counts.set(name, n);
    return n;
  }
}

/** Code to run once in a run's execution, just before it spawns: here a takeover moves the lease token. */
@Injectable()
class Interference {
  readonly once = new Map<string, () => Promise<unknown>>();
  async strike(runId: string): Promise<void> {
    const act = this.once.get(runId);
    this.once.delete(runId);
    await act?.();
  }
}

@Workflow('double')
class Double implements DurableWorkflow<number, number> {
  async run(input: number, ctx: WorkflowContext) {
    return ctx.step('double', () => input * 2);
  }
}

@Workflow('doomed')
class Doomed implements DurableWorkflow<string, never> {
  async run(reason: string): Promise<never> {
    throw new NonRetryableError(reason);
  }
}

@Workflow('await-signal-child')
class AwaitSignalChild implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return `child got ${await ctx.waitForSignal<string>('go')}`;
  }
}

/** Spawns, then fails once after the spawn: the replay must reattach to the same child. */
@Workflow('reattach', { retry: { maxAttempts: 3, initialDelay: '20ms' } })
class Reattach implements DurableWorkflow<number, number> {
  constructor(private readonly counter: Counter) {}
  async run(input: number, ctx: WorkflowContext) {
    const child = await ctx.startChild(Double, input, { step: 'double-it' });
    const same = await ctx.startChild(Double, input, { step: 'double-it' });
    if (same.runId !== child.runId) throw new NonRetryableError('two handles for one step');
    if (this.counter.hit(`reattach:${ctx.runId}`) === 1) throw new Error('crash after the spawn');
    return child.result();
  }
}

@Workflow('catches')
class Catches implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(Doomed, 'out of stock', { step: 'reserve' });
    try {
      return await child.result();
    } catch (error) {
      if (!(error instanceof ChildWorkflowFailedError)) throw error;
      return { caught: error.childError, status: error.childStatus, child: error.childRunId };
    }
  }
}

@Workflow('propagates')
class Propagates implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild('doomed', 'no', { step: 'fails' });
    return child.result();
  }
}

/** Fails its first attempt only (per run): a retry of it completes. */
@Workflow('fails-once', { retry: { maxAttempts: 1 } })
class FailsOnce implements DurableWorkflow<null, string> {
  constructor(private readonly counter: Counter) {}
  async run(_: null, ctx: WorkflowContext) {
    if (this.counter.hit(`fails-once:${ctx.runId}`) === 1) throw new Error('first attempt fails');
    return 'second attempt';
  }
}

@Workflow('propagates-once')
class PropagatesOnce implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(FailsOnce, null, { step: 'flaky' });
    return child.result();
  }
}

@Workflow('fan-out')
class FanOut implements DurableWorkflow<number, number> {
  async run(n: number, ctx: WorkflowContext) {
    const handles = [];
    for (let i = 0; i < n; i++) handles.push(await ctx.startChild(Double, i, { step: `item-${i}` }));
    const results = await ctx.all(handles);
    return results.reduce((sum, value) => sum + value, 0);
  }
}

@Workflow('fan-in-on-signals')
class FanInOnSignals implements DurableWorkflow<number, string[]> {
  async run(n: number, ctx: WorkflowContext) {
    const handles = [];
    for (let i = 0; i < n; i++) handles.push(await ctx.startChild(AwaitSignalChild, null, { step: `approval-${i}` }));
    return ctx.all(handles);
  }
}

@Workflow('waits-on-child')
class WaitsOnChild implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(AwaitSignalChild, null, { step: 'approval' });
    return `parent saw: ${await child.result()}`;
  }
}

@Workflow('spawns-late')
class SpawnsLate implements DurableWorkflow<number, number> {
  constructor(private readonly interference: Interference) {}
  async run(input: number, ctx: WorkflowContext) {
    const ready = await ctx.step('prepare', () => input);
    await this.interference.strike(ctx.runId); // not a step: nothing journaled between the token's move and the spawn
    const child = await ctx.startChild(Double, ready, { step: 'late' });
    return child.result();
  }
}

@Workflow('two-waiting-children')
class TwoWaitingChildren implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const a = await ctx.startChild(AwaitSignalChild, null, { step: 'a' });
    const b = await ctx.startChild(AwaitSignalChild, null, { step: 'b' });
    return ctx.all([a, b] as const);
  }
}

/** Ends without awaiting the child it spawned: the child stays attached, and unfinished. */
@Workflow('leaves-a-child')
class LeavesAChild implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.startChild(AwaitSignalChild, null, { step: 'left' });
    return 'left it';
  }
}

@Workflow('awaits-the-leaver')
class AwaitsTheLeaver implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await (await ctx.startChild(LeavesAChild, null, { step: 'leaver' })).result();
    return ctx.waitForSignal<string>('never');
  }
}

/** Spawns a child that fails and goes on without awaiting it: ends (`leaves`), or waits for a signal that never comes. */
@Workflow('spawns-doomed')
class SpawnsDoomed implements DurableWorkflow<{ detached: boolean; leaves: boolean }, string> {
  async run({ detached, leaves }: { detached: boolean; leaves: boolean }, ctx: WorkflowContext) {
    await ctx.startChild(Doomed, 'no', { step: 'doomed', detached });
    return leaves ? 'left it' : ctx.waitForSignal<string>('never');
  }
}

@Workflow('awaits-the-doomed-leaver')
class AwaitsTheDoomedLeaver implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await (await ctx.startChild(SpawnsDoomed, { detached: false, leaves: true }, { step: 'leaver' })).result();
    return ctx.waitForSignal<string>('never');
  }
}

@Workflow('doubles-at-d')
class DoublesAtD implements DurableWorkflow<number, number> {
  async run(input: number, ctx: WorkflowContext) {
    return (await ctx.startChild(Double, input, { step: 'd' })).result();
  }
}

/** A step held until the test opens it: `reached` resolves once the run is there. */
@Injectable()
class Gates {
  private readonly gates = new Map<string, { reached: () => void; open: () => void; isReached: Promise<void>; isOpen: Promise<void> }>();
  private gate(runId: string) {
    let gate = this.gates.get(runId);
    if (!gate) {
      let reached!: () => void;
      let open!: () => void;
      const isReached = new Promise<void>((r) => (reached = r));
      const isOpen = new Promise<void>((r) => (open = r));
      gate = { reached, open, isReached, isOpen };
      this.gates.set(runId, gate);
    }
    return gate;
  }
  async pass(runId: string): Promise<void> {
    const gate = this.gate(runId);
    gate.reached();
    await gate.isOpen;
  }
  reached = (runId: string) => this.gate(runId).isReached;
  open = (runId: string) => this.gate(runId).open();
}

@Workflow('gated-child')
class GatedChild implements DurableWorkflow<null, string> {
  constructor(private readonly gates: Gates) {}
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('gate', async () => {
      await this.gates.pass(ctx.runId);
      return 'through';
    });
  }
}

@Workflow('fan-in-quick-last')
class FanInQuickLast implements DurableWorkflow<null, string[]> {
  async run(_: null, ctx: WorkflowContext) {
    const slow = await ctx.startChild(AwaitSignalChild, null, { step: 'slow' });
    const quick = await ctx.startChild(GatedChild, null, { step: 'quick' });
    return ctx.all([slow, quick]);
  }
}

/** The compensation outlasts the in-process wait on the other child, which the failed all() no longer awaits. */
const COMPENSATION_MS = 1_000;

/**
 * Parks on a sleep before its all(), so the execution after it has the reserve child's failure in its
 * journal: its park on the payment child would not lose a race to that end (and execute again).
 */
@Workflow('compensates-all')
class CompensatesAll implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const reserve = await ctx.startChild(Doomed, 'out of stock', { step: 'reserve' });
    const payment = await ctx.startChild(AwaitSignalChild, null, { step: 'payment' });
    await ctx.sleep('settle', 500);
    try {
      await ctx.all([reserve, payment]);
      return 'all done';
    } catch {
      await ctx.step('refund', () => new Promise((r) => setTimeout(() => r(true), COMPENSATION_MS)));
      return 'compensated';
    }
  }
}

describe('child workflows', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({
      schema,
      providers: [
        Counter,
        Interference,
        SpawnsLate,
        FanInOnSignals,
        Double,
        Doomed,
        AwaitSignalChild,
        Reattach,
        Catches,
        Propagates,
        FailsOnce,
        PropagatesOnce,
        FanOut,
        WaitsOnChild,
        TwoWaitingChildren,
        CompensatesAll,
        LeavesAChild,
        AwaitsTheLeaver,
        DoublesAtD,
        SpawnsDoomed,
        AwaitsTheDoomedLeaver,
      ],
      options: { leaseMs: 1_000, inlineWaitMs: 200, sweeper: { intervalMs: 100 } },
    });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  /** A statement of this schema like `pattern` waiting for a lock. */
  const waitingOnLock = (pattern: string, what: string) =>
    eventually(
      async () =>
        (
          await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND query LIKE $2`, [
            pattern,
            `%"${schema}"%`,
          ])
        ).length > 0,
      what,
    );

  /** The run `top` waiting and its descendant `failed` failed (spawned by then). */
  const failedUnderWaiting = (top: string, failed: string) =>
    eventually(
      async () =>
        (await db.count('runs', `id = $1 AND status = 'failed'`, [failed])) === 1 && (await t.client.getRun(top)).status === 'waiting',
      'the child to fail and the run above it to wait',
    );

  it('a parent replay reattaches to the child it spawned, never a second one; the child links back to its parent', async () => {
    const handle = await t.client.start(Reattach, 21);
    expect(await handle.result({ timeout: '10s' })).toBe(42);
    const children = await db.query(`SELECT id, parent_id, parent_step FROM durable.runs WHERE parent_id = $1`, [handle.runId]);
    expect(children).toEqual([{ id: `${handle.runId}/double-it`, parent_id: handle.runId, parent_step: 'double-it' }]);
    expect((await t.client.getRun(children[0].id)).parentRunId).toBe(handle.runId);
    expect((await t.client.getRun(handle.runId)).attempt).toBe(2);
  });

  it("a failed child makes result() throw ChildWorkflowFailedError carrying the child's error; the parent may catch it", async () => {
    const handle = await t.client.start(Catches, null);
    expect(await handle.result({ timeout: '10s' })).toEqual({
      caught: {
        name: 'NonRetryableError',
        message: 'out of stock',
        stack: expect.stringContaining('NonRetryableError: out of stock\n    at '),
      },
      status: 'failed',
      child: `${handle.runId}/reserve`,
    });
  });

  it('an uncaught child failure fails the parent, and the memoized failure is replayed without waiting again', async () => {
    const handle = await t.client.start(Propagates, null);
    await expect(handle.result({ timeout: '10s' })).rejects.toMatchObject({ error: { name: 'ChildWorkflowFailedError' } });
    const [memo] = await db.query(`SELECT kind, outcome, error FROM durable.steps WHERE run_id = $1 AND key = 'child-result:fails'`, [
      handle.runId,
    ]);
    expect(memo).toMatchObject({ kind: 'child-result', outcome: 'error', error: { childStatus: 'failed', childError: { message: 'no' } } });
  });

  it("the guide's recovery: retry the failed child, then the parent, which reads the child's new outcome", async () => {
    const parent = await t.client.start(PropagatesOnce, null);
    await expect(parent.result({ timeout: '10s' })).rejects.toMatchObject({ error: { name: 'ChildWorkflowFailedError' } });
    const child = `${parent.runId}/flaky`;
    await t.client.retry(child);
    expect(await t.client.handle(child).result({ timeout: '10s' })).toBe('second attempt');
    await t.client.retry(parent.runId);
    expect(await t.client.handle(parent.runId).result({ timeout: '10s' })).toBe('second attempt');
    expect(await db.count('runs', 'parent_id = $1', [parent.runId])).toBe(1); // the same child, not a second
  });

  it('a parent whose lease token moved (taken over) inserts no child: the child is inserted by the execution that took it over', async () => {
    const runId = `spawns-late-${Date.now()}`;
    t.get(Interference).once.set(runId, () => db.query(`UPDATE durable.runs SET lease_token = lease_token + 1 WHERE id = $1`, [runId]));
    const handle = await t.client.start(SpawnsLate, 21, { runId });
    expect(await handle.result({ timeout: '10s' })).toBe(42);
    const events = await db.query(
      `SELECT run_id, event FROM durable.history WHERE run_id IN ($1, $2) AND event IN ('lease-taken-over', 'started') ORDER BY id`,
      [runId, `${runId}/late`],
    );
    expect(events).toEqual([
      { run_id: runId, event: 'started' },
      { run_id: runId, event: 'lease-taken-over' },
      { run_id: `${runId}/late`, event: 'started' },
    ]);
  });

  it('fans out to 100 children and fans in with all()', async () => {
    const started = Date.now();
    const handle = await t.client.start(FanOut, 100);
    expect(await handle.result({ timeout: '30s' })).toBe(9_900);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await db.count('runs', `parent_id = $1 AND status = 'completed'`, [handle.runId])).toBe(100);
  });

  it("a fan-in reads each child's row about once, not once per sibling's end: rows read grow linearly with the children", async () => {
    /** Child rows of `parent` read while `work` runs: in-process refreshes, and journals loaded (by claims, deliveries, re-executions). */
    const childRowsRead = async (parent: () => string, work: () => Promise<unknown>) => {
      let rows = 0;
      const count = (children: StoredChild[]) => (rows += children.filter((c) => c.id.startsWith(`${parent()}/`)).length);
      const readChildren = JournalRepository.prototype.readChildren;
      const from = jest.spyOn(Journal, 'from');
      const read = jest.spyOn(JournalRepository.prototype, 'readChildren').mockImplementation(async function (
        this: JournalRepository,
        ...args
      ) {
        const children = await readChildren.apply(this, args);
        count(children);
        return children;
      });
      try {
        await work();
      } finally {
        read.mockRestore();
        for (const [loaded] of from.mock.calls) count(loaded.children);
        from.mockRestore();
      }
      return rows;
    };
    // The children end one at a time, each waking the parent once: n wakes of a parent awaiting them all.
    for (const n of [10, 40]) {
      let runId = '';
      const rows = await childRowsRead(
        () => runId,
        async () => {
          const handle = await t.client.start(FanInOnSignals, n);
          runId = handle.runId;
          await eventually(
            async () => (await db.count('runs', `parent_id = $1 AND status = 'waiting'`, [runId])) === n,
            'the children to wait',
          );
          for (let i = 0; i < n; i++) {
            await t.signals.signal(`${runId}/approval-${i}`, 'go', `yes ${i}`);
            await eventually(
              async () => (await db.count('steps', `run_id = $1 AND kind = 'child-result'`, [runId])) === i + 1,
              `the parent to take child ${i}'s result`,
            );
          }
          expect(await handle.result({ timeout: '10s' })).toEqual(Array.from({ length: n }, (_, i) => `child got yes ${i}`));
        },
      );
      expect(rows).toBeGreaterThanOrEqual(n);
      expect(rows).toBeLessThanOrEqual(2 * n);
    }
  });

  it('a parent waiting on a child that waits for a signal parks (reason child) past its lease without using a retry, and wakes when the child ends', async () => {
    const handle = await t.client.start(WaitsOnChild, null);
    const childId = `${handle.runId}/approval`;
    const run = await eventually(async () => {
      const r = await t.client.getRun(handle.runId);
      return r.status === 'waiting' && r;
    }, 'the parent to park');
    expect(run.waiting).toMatchObject({ kind: 'child', childRunId: childId, step: 'approval' });
    await new Promise((r) => setTimeout(r, 2_500)); // longer than the lease: parking is not a timeout
    expect((await t.client.getRun(handle.runId)).status).toBe('waiting');
    await t.signals.signal(childId, 'go', 'late approval');
    expect(await handle.result({ timeout: '5s' })).toBe('parent saw: child got late approval');
    expect((await t.client.getRun(handle.runId)).attempt).toBe(1);
  });

  it('cancelling a parent cancels its unfinished children at once', async () => {
    const handle = await t.client.start(TwoWaitingChildren, null);
    await eventually(
      async () => (await db.count('runs', `parent_id = $1 AND status = 'waiting'`, [handle.runId])) === 2,
      'both children to wait',
    );
    await t.signals.signal(`${handle.runId}/a`, 'go', 'done');
    await eventually(async () => (await t.client.getRun(`${handle.runId}/a`)).status === 'completed', 'child a to complete');
    await t.client.cancel(handle.runId, 'order withdrawn', { actor: 'carol' });
    const rows = await db.query(`SELECT id, status FROM durable.runs WHERE id = $1 OR parent_id = $1 ORDER BY id`, [handle.runId]);
    expect(rows).toEqual([
      { id: handle.runId, status: 'cancelled' },
      { id: `${handle.runId}/a`, status: 'completed' },
      { id: `${handle.runId}/b`, status: 'cancelled' },
    ]);
    const [cascade] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'cancelled'`, [
      `${handle.runId}/b`,
    ]);
    expect(cascade).toEqual({ actor: 'carol', detail: { reason: 'order withdrawn', cascadedFrom: handle.runId } });
  });

  it('cancelling a parent reaches the unfinished grandchild of a child that ended; a completed run refuses the cancel and leaves its child', async () => {
    const handle = await t.client.start(AwaitsTheLeaver, null);
    const grandchild = `${handle.runId}/leaver/left`;
    await eventually(async () => (await t.client.getRun(handle.runId)).status === 'waiting', 'the parent to wait after its child ended');
    expect((await t.client.getRun(grandchild)).status).toMatch(/running|waiting/);
    const deadline = new Date(Date.now() + 3_600_000);
    await t.client.setDeadline(handle.runId, deadline); // an operator's deadline walks the same way
    expect((await t.client.getRun(grandchild)).deadline).toEqual(deadline);
    await t.client.cancel(handle.runId, 'order withdrawn');
    expect((await t.client.getRun(grandchild)).status).toBe('cancelled'); // before: the walk stopped at the completed child
    const [cascade] = await db.query(`SELECT detail FROM durable.history WHERE run_id = $1 AND event = 'cancelled'`, [grandchild]);
    expect(cascade.detail).toEqual({ reason: 'order withdrawn', cascadedFrom: handle.runId });

    const ended = await t.client.start(LeavesAChild, null);
    expect(await ended.result({ timeout: '5s' })).toBe('left it');
    await expect(t.client.cancel(ended.runId, 'too late')).rejects.toThrow(InvalidTransitionError); // before: its child was cancelled
    expect((await t.client.getRun(`${ended.runId}/left`)).status).toMatch(/running|waiting/);
    await t.signals.signal(`${ended.runId}/left`, 'go', 'x');
  });

  it("a run that holds a child's id but is not that child (started by a client) is not adopted: the spawn is refused with RunConflictError", async () => {
    const parentId = `taken-${Date.now()}`;
    const stranger = await t.client.start(Double, 21, { runId: `${parentId}/d` });
    expect(await stranger.result({ timeout: '5s' })).toBe(42);
    const parent = await t.client.start(DoublesAtD, 1, { runId: parentId });
    // Before: the parent took the stranger's output (42, not 2) as its child's.
    await expect(parent.result({ timeout: '10s' })).rejects.toMatchObject({
      error: { name: 'RunConflictError', message: expect.stringContaining(`is not the child of run "${parentId}" at step "d"`) },
    });
    const reattached = await t.client.start(DoublesAtD, 4); // a child of its own, on every re-execution
    expect(await reattached.result({ timeout: '5s' })).toBe(8);
  });

  it("cancelling a parent cancels a child whose spawn commits while the cancel waits for the parent's row", async () => {
    const parent = await t.client.start(AwaitSignalChild, null);
    await eventually(async () => (await t.client.getRun(parent.runId)).status === 'waiting', 'the parent to wait');
    const childId = `${parent.runId}/late`;
    // A spawn in flight, as the engine's start of a child holds it: the parent's row FOR SHARE, the child inserted, not committed.
    const spawn = new Client(databaseUrl());
    await spawn.connect();
    try {
      await spawn.query('BEGIN');
      await spawn.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR SHARE`, [parent.runId]);
      await spawn.query(
        `INSERT INTO "${schema}".runs (id, workflow, status, parent_id, input) VALUES ($1, 'await-signal-child', 'pending', $2, 'null')`,
        [childId, parent.runId],
      );
      const cancelling = t.client.cancel(parent.runId, 'withdrawn');
      await waitingOnLock('%FOR UPDATE%', "the cancel to wait for the parent's row");
      await spawn.query('COMMIT');
      await cancelling;
    } finally {
      await spawn.end();
    }
    expect(await db.query(`SELECT id, status FROM durable.runs WHERE id = $1 OR parent_id = $1 ORDER BY id`, [parent.runId])).toEqual([
      { id: parent.runId, status: 'cancelled' },
      { id: childId, status: 'cancelled' },
    ]);
  });

  it('a failed attached child is not retried once its parent or an ancestor is cancelled (refused, naming it); a detached one is', async () => {
    const parent = await t.client.start(SpawnsDoomed, { detached: false, leaves: false });
    const child = `${parent.runId}/doomed`;
    await failedUnderWaiting(parent.runId, child);
    await t.client.cancel(parent.runId, 'withdrawn');
    expect((await t.client.getRun(child)).status).toBe('failed'); // a cancel leaves an ended child as it is
    // Before: the child ran again, under a cancelled parent.
    await expect(t.client.retry(child)).rejects.toThrow(
      `Cannot retry run "${child}": its parent, run "${parent.runId}", was cancelled, and an attached child ends with its parent; start the work anew instead.`,
    );
    expect((await t.client.getRun(child)).status).toBe('failed');
    expect(await db.count('history', `run_id = $1 AND event = 'retried'`, [child])).toBe(0);

    const top = await t.client.start(AwaitsTheDoomedLeaver, null);
    const grandchild = `${top.runId}/leaver/doomed`;
    await failedUnderWaiting(top.runId, grandchild);
    await eventually(async () => (await t.client.getRun(`${top.runId}/leaver`)).status === 'completed', 'the middle run to end'); // not cancelled with the top
    await t.client.cancel(top.runId, 'withdrawn');
    await expect(t.client.retry(grandchild)).rejects.toThrow(`run "${top.runId}", an ancestor it is attached to, was cancelled`);

    const detaching = await t.client.start(SpawnsDoomed, { detached: true, leaves: false });
    const detached = `${detaching.runId}/doomed`;
    await failedUnderWaiting(detaching.runId, detached);
    await t.client.cancel(detaching.runId, 'withdrawn');
    await t.client.retry(detached);
    expect(await db.count('history', `run_id = $1 AND event = 'retried'`, [detached])).toBe(1);
  });

  it("a retry of a failed child waits for a cancel that holds its parent's row, and is refused once that cancel commits", async () => {
    const parent = await t.client.start(SpawnsDoomed, { detached: false, leaves: false });
    const child = `${parent.runId}/doomed`;
    await failedUnderWaiting(parent.runId, child);
    // A cancel in flight, as cancelTree makes it: the parent's row FOR UPDATE, then the parent cancelled.
    const cancel = new Client(databaseUrl());
    await cancel.connect();
    try {
      await cancel.query('BEGIN');
      await cancel.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [parent.runId]);
      const retrying = t.client.retry(child).then(
        () => 'retried',
        (error: Error) => error.message,
      );
      // Before: the retry did not wait, and ran the child again under the parent cancelled a moment later.
      await waitingOnLock('%FOR KEY SHARE OF r%', "the retry to wait for the parent's row");
      await cancel.query(`UPDATE "${schema}".runs SET status = 'cancelled' WHERE id = $1`, [parent.runId]);
      await cancel.query('COMMIT');
      expect(await retrying).toContain(`its parent, run "${parent.runId}", was cancelled`);
    } finally {
      await cancel.end();
    }
    expect((await t.client.getRun(child)).status).toBe('failed');
  });

  it('a cancelled child makes result() throw ChildWorkflowFailedError with status cancelled', async () => {
    const handle = await t.client.start(WaitsOnChild, null);
    const childId = `${handle.runId}/approval`;
    await eventually(async () => (await t.client.getRun(handle.runId)).status === 'waiting', 'the parent to park');
    await t.client.cancel(childId, 'not needed');
    await expect(handle.result({ timeout: '5s' })).rejects.toMatchObject({
      error: { name: 'ChildWorkflowFailedError', message: `Child run "${childId}" cancelled: CancelledError: not needed` },
    });
  });
  it("once a child's failure has rejected all(), the other child no longer parks the parent: its catch goes on", async () => {
    const handle = await t.client.start(CompensatesAll, null);
    expect(await handle.result({ timeout: '10s' })).toBe('compensated');
    expect((await t.client.getRun(`${handle.runId}/payment`)).status).not.toBe('completed');
  });
});

describe('ctx.all over children, waiting in-process (inlineWaitMs 1.5 s)', () => {
  const { boot } = fileApps({
    schema: uniqueSchema(),
    providers: [Gates, GatedChild, AwaitSignalChild, FanInQuickLast],
    options: { inlineWaitMs: 1_500, sweeper: { intervalMs: 100 } },
  });
  let t: DurableTestApp;
  beforeAll(async () => {
    t = await boot();
  });

  it("one child's end answers every child's wait in-process: the others wait out their time, then park the parent", async () => {
    const runId = `fan-in-${Date.now()}`;
    // The parent's waits in-process as its execution takes them, to end the quick child while both are pending.
    const bus = t.app.get(WakeBus);
    const watch = bus.watch.bind(bus);
    let pending = 0;
    const spy = jest.spyOn(bus, 'watch').mockImplementation((watched) => {
      const wakes = watch(watched);
      if (watched !== runId) return wakes;
      return {
        ...wakes,
        next: (ms, since) => {
          const wait = wakes.next(ms, since);
          pending++;
          void wait.then(() => pending--);
          return wait;
        },
      };
    });
    try {
      const handle = await t.client.start(FanInQuickLast, null, { runId });
      const gates = t.app.get(Gates);
      await gates.reached(`${runId}/quick`);
      await eventually(async () => pending === 2, 'the parent to wait on both children in-process');
      gates.open(`${runId}/quick`); // its end wakes the parent while it waits on both
      const parked = await eventually(async () => {
        const run = await t.client.getRun(runId);
        return run.status === 'waiting' && run; // before: the slow child's wait never ended, the parent ran on for ever
      }, 'the parent to park on the slow child');
      expect(parked.waiting).toMatchObject({ kind: 'child', childRunId: `${runId}/slow` });
      await t.signals.signal(`${runId}/slow`, 'go', 'yes');
      expect(await handle.result({ timeout: '10s' })).toEqual(['child got yes', 'through']);
    } finally {
      spy.mockRestore();
    }
  });
});
