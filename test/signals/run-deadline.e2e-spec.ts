import {
  ChildWorkflowFailedError,
  DeadlineExceededError,
  DurableWorkflow,
  Duration,
  InvalidArgumentError,
  InvalidTransitionError,
  NonRetryableError,
  RunFailedError,
  RunHandle,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { Client } from 'pg';
import { JournalRepository } from 'nestjs-durable/persistence/journal.repository';
import { deadlinePassedSql } from 'nestjs-durable/persistence/sql/checkpoint.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, DurableTestApp, eventually, fileApps, uniqueSchema } from '../setup/durable-app';

/** How many times each cleanup step's body ran, in this process. */
const ran = new Map<string, number>();
const count = (runId: string, what: string) => {
  const key = `${runId}:${what}`;
  ran.set(key, (ran.get(key) ?? 0) + 1);
  return what;
};
const isDeadline = (error: unknown) => error instanceof DeadlineExceededError;

/** Waits for a signal; at the deadline, cleans up in a step, pauses, and returns what it did. */
@Workflow('dl-cleanup', { deadlineGrace: '30s' })
class Cleanup implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.waitForSignal<string>('approval');
      return 'approved';
    } catch (error) {
      if (!isDeadline(error)) throw error;
      await ctx.step('release-hold', () => count(ctx.runId, 'release-hold'));
      await ctx.waitForSignal('cleanup-done'); // a wait inside the grace: it parks, and the replay throws again above
      return 'cleaned up';
    }
  }
}

/** Swallows the deadline and keeps waiting: ended at the grace's end all the same. */
@Workflow('dl-stubborn', { deadlineGrace: '600ms' })
class Stubborn implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.waitForSignal('never');
    } catch {
      await ctx.step('noted', () => count(ctx.runId, 'noted'));
      await ctx.waitForSignal('never-either');
    }
    return 'unreachable';
  }
}

/** A step that does not end by the grace's end: the run is failed while it runs. */
@Workflow('dl-slow-step', { deadlineGrace: '300ms' })
class SlowStep implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('slow', () => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 60_000).unref()));
    return 'unreachable';
  }
}

/** Polls in naps shorter than inlineWaitMs, so it never parks, until a deadline throws; then cleans up. */
@Workflow('dl-poller', { deadlineGrace: '30s' })
class Poller implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      for (let i = 0; ; i++) await ctx.sleep(`poll-${i}`, '20ms');
    } catch (error) {
      if (!isDeadline(error)) throw error;
      return ctx.step('cleanup', () => count(ctx.runId, 'cleanup'));
    }
  }
}

/** A long sleep under a shorter deadline: the sleep throws at the deadline. */
@Workflow('dl-sleeper', { timeout: '400ms' })
class Sleeper implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.sleep('nap', '1h');
      return 'slept';
    } catch (error) {
      return isDeadline(error) ? 'woken by the deadline' : 'other';
    }
  }
}

/** Sleeps an hour, then takes a step; at the deadline, sleeps an hour more in its grace (its cleanup), then says so. */
@Workflow('dl-resumed-sleep', { deadlineGrace: '1h' })
class ResumedSleep implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.sleep('nap', '1h');
    } catch (error) {
      if (!isDeadline(error)) throw error;
      await ctx.sleep('cleanup-nap', '1h');
      return 'woken by the deadline';
    }
    return ctx.step('after', () => count(ctx.runId, 'after'));
  }
}

/** A select with its own deadline, under the run's: whichever is earlier decides. */
@Workflow('dl-select')
class SelectUnder implements DurableWorkflow<{ selectDeadline: Duration }, unknown> {
  async run(input: { selectDeadline: Duration }, ctx: WorkflowContext) {
    try {
      return await ctx.select('answer', { yes: ctx.signal('yes') }, { deadline: input.selectDeadline });
    } catch (error) {
      return isDeadline(error) ? { key: 'run-deadline' } : { key: 'other' };
    }
  }
}

@Workflow('dl-waiter')
class Waiter implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal<string>('go');
  }
}

/** Starts an attached and a detached child, then waits. */
@Workflow('dl-parent')
class Parent implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.startChild(Waiter, null, { step: 'attached' });
    await ctx.startChild(Waiter, null, { step: 'detached', detached: true });
    return ctx.waitForSignal<string>('done');
  }
}

/** A promise the test opens: what a held step waits for. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Opened by the test: holds the queue's one lane while closed. */
const lane = gate();

/** A workflow with a timeout of its own, in a queue of one lane, for the queued case. */
@Workflow('dl-timed', { timeout: '1h', queue: 'one-lane' })
class Timed implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('hold', () => lane.opened.then(() => 'held'));
    return 'done';
  }
}

/** The gates the test opens, by label: a run of HeldLane with one holds the lane of its queue until then. */
const lanes = new Map<string, ReturnType<typeof gate>>();

/** Holds the lane of its queue while its label's gate is closed; answers its label. */
@Workflow('dl-held-lane', { queue: 'held-lane' })
class HeldLane implements DurableWorkflow<string, string> {
  async run(label: string, ctx: WorkflowContext) {
    await ctx.step('hold', async () => {
      await lanes.get(label)?.opened;
      return 'held';
    });
    return label;
  }
}

/** Starts a child in the held lane and answers what its run ended with. */
@Workflow('dl-queued-child-parent')
class QueuedChildParent implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(HeldLane, 'queued child', { step: 'child' });
    try {
      return await child.result();
    } catch (error) {
      if (!(error instanceof ChildWorkflowFailedError)) throw error;
      return `child ${error.childStatus}: ${error.childError.name}`;
    }
  }
}

/** HeldLane outside any queue: with a worker's concurrency of 1, it holds the instance's one slot while its gate is closed. */
@Workflow('dl-unqueued')
class Unqueued extends HeldLane {}

/** Opened by the test: holds the step in which an operator moves the deadline; `entered` once the step runs. */
const stepHeld = gate();
const entered = gate();

/** A step, then a wait: the deadline it loaded passes while the step runs. */
@Workflow('dl-extended-while-running', { deadlineGrace: '30s' })
class ExtendedWhileRunning implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('busy', () => {
      entered.open();
      return stepHeld.opened.then(() => 'done');
    });
    try {
      return await ctx.waitForSignal<string>('go');
    } catch (error) {
      return isDeadline(error) ? 'deadline-thrown' : 'other';
    }
  }
}

/** Opened by the test: holds the long step, in which the run's first grace ends; counts its executions. */
const longHeld = gate();
let longRuns = 0;

/** One long step under a short deadline and grace: an operator extends the deadline while it runs. */
@Workflow('dl-long-step-extended', { deadlineGrace: '300ms' })
class LongStepExtended implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('long', () => {
      longRuns++;
      return longHeld.opened.then(() => 'done');
    });
  }
}

/** Fails its first attempt; the backoff (a minute) outlasts the deadline: the retry comes at the deadline, which the cleanup meets. */
@Workflow('dl-backoff', { deadlineGrace: '30s', retry: { maxAttempts: 3, initialDelay: '1m' } })
class Backoff implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.step('flaky', () => {
        count(ctx.runId, 'flaky');
        if (ran.get(`${ctx.runId}:flaky`) === 1) throw new Error('the first try fails');
        return 'ok';
      });
      return await ctx.waitForSignal<string>('go');
    } catch (error) {
      if (!isDeadline(error)) throw error;
      return ctx.step('cleanup', () => count(ctx.runId, 'cleanup'));
    }
  }
}

const HOUR = 3_600_000;

describe('run deadlines: the awaited call throws, cleanup runs in the grace, the run ends at the grace', () => {
  const schema = uniqueSchema('dl');
  const { db, boot } = fileApps({
    schema,
    providers: [
      Cleanup,
      Stubborn,
      SlowStep,
      Poller,
      Sleeper,
      SelectUnder,
      Waiter,
      Parent,
      Timed,
      ExtendedWhileRunning,
      LongStepExtended,
      Backoff,
    ],
    options: { inlineWaitMs: 100, queues: { 'one-lane': { concurrency: 1 } } },
  });
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await boot();
  });

  /** The name of the signal (or the select) a run waits on. */
  const waitingFor = async (runId: string) => {
    const waiting = (await app.client.getRun(runId)).waiting;
    return waiting && 'name' in waiting ? waiting.name : undefined;
  };
  const failure = async (runId: string) => {
    const error = await app.client
      .handle(runId)
      .result({ timeout: '20s' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(RunFailedError);
    return (error as RunFailedError).error;
  };

  it('the parked wait throws DeadlineExceededError at the deadline; the cleanup step runs once, and the replay throws at the same call', async () => {
    const run = await app.client.start(Cleanup, null, { timeout: '500ms' });
    const view = await app.client.getRun(run.runId);
    expect(view.deadline).toBeInstanceOf(Date);
    expect(view.deadline!.getTime() - view.createdAt.getTime()).toBeGreaterThanOrEqual(490);
    await eventually(async () => (await waitingFor(run.runId)) === 'cleanup-done', 'in its cleanup');
    // The signal the run had waited for arrives late: the replay still throws where the deadline passed.
    await app.signals.signal(run.runId, 'approval', 'too late');
    await app.signals.signal(run.runId, 'cleanup-done', null);
    expect(await run.result({ timeout: '10s' })).toBe('cleaned up');
    expect(ran.get(`${run.runId}:release-hold`)).toBe(1);
    expect(await db.count('steps', `run_id = $1 AND kind = 'deadline-passed'`, [run.runId])).toBe(1);
  });

  it('a workflow that swallows the error and keeps waiting is failed with DeadlineExceededError at the grace, not retried', async () => {
    const run = await app.client.start(Stubborn, null, { timeout: '300ms' });
    const error = await failure(run.runId);
    expect(error).toMatchObject({ name: 'DeadlineExceededError', message: expect.stringMatching(/grace of 600 ms/) });
    expect(ran.get(`${run.runId}:noted`)).toBe(1);
    expect((await app.client.getRun(run.runId)).attempt).toBe(1);
  });

  it('a step still running at the grace end does not hold the run: it is failed then', async () => {
    const started = Date.now();
    const run = await app.client.start(SlowStep, null, { timeout: '300ms' });
    expect(await failure(run.runId)).toMatchObject({ name: 'DeadlineExceededError' });
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('a sleep longer than the run deadline throws at the deadline (@Workflow timeout)', async () => {
    const run = await app.client.start(Sleeper, null);
    expect(await run.result({ timeout: '10s' })).toBe('woken by the deadline');
  });

  it("a retry's backoff past the run deadline wakes the run at the deadline, whose next wait throws it, so the cleanup runs", async () => {
    const run = await app.client.start(Backoff, null, { timeout: '1s' });
    expect(await run.result({ timeout: '20s' })).toBe('cleanup'); // before: woken after a minute, past its grace, only failed
    expect(ran.get(`${run.runId}:cleanup`)).toBe(1);
    expect((await app.client.getRun(run.runId)).attempt).toBe(2);
    // An operator's new deadline: the backoff wakes at its own end or the new deadline, whichever is first.
    const later = await app.client.start(Backoff, null, { deadline: new Date(Date.now() + HOUR) });
    const wake = async () =>
      (
        await db.query<{ wake_at: Date; until: Date; deadline: Date }>(
          `SELECT wake_at, (wait->>'until')::timestamptz AS until, deadline FROM "${schema}".runs WHERE id = $1 AND wait_kind = 'retry'`,
          [later.runId],
        )
      )[0];
    const backingOff = await eventually(wake, 'the first try to fail');
    expect(backingOff.wake_at).toEqual(backingOff.until); // a minute: before the deadline
    const soon = new Date(Date.now() + 30_000);
    await app.client.setDeadline(later.runId, soon);
    expect((await wake()).wake_at).toEqual(soon);
    await app.client.setDeadline(later.runId, null);
    expect((await wake()).wake_at).toEqual(backingOff.until);
    await app.client.cancel(later.runId, 'done with it');
  });

  it('children inherit the deadline; a detached child neither inherits it nor is cancelled with its parent; an operator change cascades to inheritors', async () => {
    const deadline = new Date(Date.now() + HOUR);
    const parent = await app.client.start(Parent, null, { deadline });
    await eventually(async () => (await waitingFor(parent.runId)) === 'done', 'parent parked');
    const attached = await app.client.getRun(`${parent.runId}/attached`);
    const detached = await app.client.getRun(`${parent.runId}/detached`);
    expect(attached.deadline?.getTime()).toBe(deadline.getTime());
    expect(attached.detached).toBeUndefined();
    expect(detached.deadline).toBeUndefined();
    expect(detached.detached).toBe(true);

    const later = new Date(deadline.getTime() + HOUR);
    await app.client.setDeadline(parent.runId, later, { actor: 'ops' });
    expect((await app.client.getRun(parent.runId)).deadline?.getTime()).toBe(later.getTime());
    expect((await app.client.getRun(attached.runId)).deadline?.getTime()).toBe(later.getTime());
    expect((await app.client.getRun(detached.runId)).deadline).toBeUndefined();
    expect(await db.count('history', `run_id = $1 AND event = 'deadline-set' AND actor = 'ops'`, [parent.runId])).toBe(1);
    expect(
      await db.count('history', `run_id = $1 AND event = 'deadline-set' AND detail->>'inheritedFrom' = $2`, [attached.runId, parent.runId]),
    ).toBe(1);

    await app.client.cancel(parent.runId);
    expect((await app.client.getRun(attached.runId)).status).toBe('cancelled');
    expect((await app.client.getRun(detached.runId)).status).toBe('waiting');
    await app.signals.signal(detached.runId, 'go', 'still here');
    expect(await app.client.handle(detached.runId).result({ timeout: '10s' })).toBe('still here');
  });

  /**
   * Sets `parentId`'s root's deadline to `later` while a spawn of `childId` under `parentId` is in
   * flight, as the engine's start of a child holds it: the parent's row FOR SHARE, the child inserted
   * with `deadline`. The spawn commits once the change waits for the parent's row.
   */
  const setDeadlineAcrossSpawn = async (rootId: string, parentId: string, childId: string, deadline: Date, later: Date) => {
    const spawn = new Client(databaseUrl());
    await spawn.connect();
    try {
      await spawn.query('BEGIN');
      await spawn.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR SHARE`, [parentId]);
      await spawn.query(
        `INSERT INTO "${schema}".runs (id, workflow, status, parent_id, input, deadline) VALUES ($1, 'dl-waiter', 'pending', $2, 'null', $3)`,
        [childId, parentId, deadline],
      );
      const setting = app.client.setDeadline(rootId, later);
      const [{ pid }] = (await spawn.query('SELECT pg_backend_pid() AS pid')).rows;
      await eventually(
        async () => (await db.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [pid])).length > 0,
        "the change to wait for the parent's row",
      );
      await spawn.query('COMMIT');
      await setting;
    } finally {
      await spawn.end();
    }
  };

  /**
   * Extends the deadline of a Parent run whose attached child (it inherited the deadline) is held by `hold`, a transaction
   * on the child's row that commits once the change waits for that row. Returns the child's id.
   */
  const extendWhileChildHeld = async (hold: (client: Client, child: { id: string; token: string; deadline: Date }) => Promise<void>) => {
    const deadline = new Date(Date.now() + HOUR);
    const parent = await app.client.start(Parent, null, { deadline });
    const id = `${parent.runId}/attached`;
    // Both parked: a park of the child's own would otherwise be what waits on the held row.
    await eventually(async () => (await waitingFor(parent.runId)) === 'done' && (await waitingFor(id)) === 'go', 'parent and child parked');
    const [child] = await db.query<{ token: string; deadline: Date }>(
      `SELECT lease_token AS token, deadline FROM durable.runs WHERE id = $1`,
      [id],
    );
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await hold(holder, { id, ...child });
      const setting = app.client.setDeadline(parent.runId, new Date(deadline.getTime() + HOUR));
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
      await eventually(
        async () =>
          (
            await db.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%RECURSIVE target%'`, [
              pid,
            ])
          ).length > 0,
        "the change to wait for the child's row",
      );
      await holder.query('COMMIT');
      await setting;
    } finally {
      await holder.end();
    }
    return id;
  };

  it("an operator extends a deadline while an inheriting child's passing of it commits: the child's passing is cleared too", async () => {
    const child = await extendWhileChildHeld(async (client, { id, token, deadline }) => {
      // As the child's execution journals the passing (deadlinePassedSql): its row FOR SHARE, the step inserted.
      const error = { name: 'DeadlineExceededError', message: 'passed', at: 'signal:go' };
      const { rows } = await client.query(deadlinePassedSql(tablesFor(schema)), [id, token, deadline, JSON.stringify(error)]);
      expect(rows).toEqual([{ held: true, same: true }]);
    });
    // Cleared in the change's own statement, whose snapshot predated the passing, it stayed: the child threw again at once.
    expect(await db.count('steps', `run_id = $1 AND kind = 'deadline-passed'`, [child])).toBe(0);
  });

  it('an operator extends a deadline while an inheriting child ends: the ended child is left as it ended', async () => {
    let before!: Date;
    const child = await extendWhileChildHeld(async (client, { id, deadline }) => {
      before = deadline;
      await client.query(
        `UPDATE "${schema}".runs SET status = 'completed', output = '"done"', finished_at = now(), updated_at = now() WHERE id = $1`,
        [id],
      );
    });
    const view = await app.client.getRun(child);
    expect(view.status).toBe('completed');
    expect(view.deadline?.getTime()).toBe(before.getTime());
    expect(await db.count('history', `run_id = $1 AND event = 'deadline-set'`, [child])).toBe(0);
  });

  it("an operator's deadline reaches a child whose spawn commits while the change waits for the parent's row", async () => {
    const deadline = new Date(Date.now() + HOUR);
    const parent = await app.client.start(Waiter, null, { deadline });
    await eventually(async () => (await waitingFor(parent.runId)) === 'go', 'the parent to wait');
    const later = new Date(deadline.getTime() + HOUR);
    await setDeadlineAcrossSpawn(parent.runId, parent.runId, `${parent.runId}/late`, deadline, later);
    expect((await app.client.getRun(`${parent.runId}/late`)).deadline?.getTime()).toBe(later.getTime());
  });

  it("an operator's deadline reaches a grandchild whose spawn commits while the change waits for its parent's row, at any level", async () => {
    const deadline = new Date(Date.now() + HOUR);
    const root = await app.client.start(Waiter, null, { deadline });
    await eventually(async () => (await waitingFor(root.runId)) === 'go', 'the root to wait');
    const [child, grandchild] = [`${root.runId}/child`, `${root.runId}/child/late`];
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, parent_id, input, deadline) VALUES ($1, 'dl-waiter', 'pending', $2, 'null', $3)`,
      [child, root.runId, deadline],
    );
    const later = new Date(deadline.getTime() + HOUR);
    await setDeadlineAcrossSpawn(root.runId, child, grandchild, deadline, later);
    for (const id of [root.runId, child, grandchild]) expect((await app.client.getRun(id)).deadline?.getTime()).toBe(later.getTime());
    expect(
      await db.count('history', `run_id = $1 AND event = 'deadline-set' AND detail->>'inheritedFrom' = $2`, [grandchild, root.runId]),
    ).toBe(1);
  });

  it('an operator extends a deadline that has passed: the journaled passing is cleared and the call waits again', async () => {
    const run = await app.client.start(Cleanup, null, { timeout: '300ms' });
    await eventually(async () => (await waitingFor(run.runId)) === 'cleanup-done', 'in its cleanup');
    await app.client.setDeadline(run.runId, new Date(Date.now() + HOUR));
    await eventually(async () => (await waitingFor(run.runId)) === 'approval', 'waiting for approval again');
    expect(await db.count('steps', `run_id = $1 AND kind = 'deadline-passed'`, [run.runId])).toBe(0);
    await app.signals.signal(run.runId, 'approval', 'in time now');
    expect(await run.result({ timeout: '10s' })).toBe('approved');
  });

  it('an operator extends the deadline of a run executing a step: its next wait waits under the new one, not the one it loaded', async () => {
    const run = await app.client.start(ExtendedWhileRunning, null, { timeout: '500ms' });
    await entered.opened;
    const loaded = (await app.client.getRun(run.runId)).deadline!;
    await app.client.setDeadline(run.runId, new Date(Date.now() + HOUR));
    await eventually(async () => Date.now() > loaded.getTime() + 100, 'the deadline the execution loaded to pass');
    stepHeld.open();
    await eventually(async () => (await waitingFor(run.runId)) === 'go', 'waiting for go under the new deadline');
    expect(await db.count('steps', `run_id = $1 AND kind = 'deadline-passed'`, [run.runId])).toBe(0);
    await app.signals.signal(run.runId, 'go', 'in time');
    expect(await run.result({ timeout: '10s' })).toBe('in time');
  });

  it('an operator extends the deadline of a run whose step outlasts the old grace: the step is not run again while it still runs', async () => {
    const run = await app.client.start(LongStepExtended, null, { timeout: '300ms' });
    await eventually(async () => longRuns === 1, 'in its long step');
    const loaded = (await app.client.getRun(run.runId)).deadline!;
    await app.client.setDeadline(run.runId, new Date(Date.now() + HOUR));
    // The grace the execution loaded ends (300 ms after the old deadline) while the step runs: the execution expires,
    // finds the deadline moved, and executes again. Without waiting for the step, it ran it a second time at once.
    await eventually(async () => longRuns > 1 || Date.now() > loaded.getTime() + 300 + 1_500, 'the loaded grace to end, and a while more');
    longHeld.open();
    expect(await run.result({ timeout: '10s' })).toBe('done');
    expect(longRuns).toBe(1);
  });

  it('an operator shortens a deadline: the parked run wakes by the new one; clearing removes it; a past instant counts as now', async () => {
    const run = await app.client.start(Waiter, null, { deadline: new Date(Date.now() + HOUR) });
    await eventually(async () => (await waitingFor(run.runId)) === 'go', 'parked');
    await app.client.setDeadline(run.runId, null);
    expect((await app.client.getRun(run.runId)).deadline).toBeUndefined();
    await app.client.setDeadline(run.runId, new Date(Date.now() + 300));
    expect(await failure(run.runId)).toMatchObject({ name: 'DeadlineExceededError' });
    // An instant already past counts as now: a graceful stop with the whole grace, not a failure at once.
    const stopped = await app.client.start(Cleanup, null, { deadline: new Date(Date.now() + HOUR) });
    await eventually(async () => (await waitingFor(stopped.runId)) === 'approval', 'waiting for approval');
    const asked = Date.now();
    await app.client.setDeadline(stopped.runId, new Date(asked - HOUR));
    expect((await app.client.getRun(stopped.runId)).deadline!.getTime()).toBeGreaterThanOrEqual(asked - 1_000);
    await eventually(async () => (await waitingFor(stopped.runId)) === 'cleanup-done', 'in its cleanup');
    await expect(app.client.setDeadline(run.runId, null)).resolves.toBeUndefined(); // a failed run: before a retry
    const done = await app.client.start(Waiter, null);
    await app.signals.signal(done.runId, 'go', 'x');
    await done.result({ timeout: '10s' });
    await expect(app.client.setDeadline(done.runId, null)).rejects.toThrow(InvalidTransitionError);
  });

  it('an operator sets a deadline on a run that executes without parking: its next wait throws by it, as a parked one would', async () => {
    const run = await app.client.start(Poller, null);
    await eventually(async () => (await db.count('steps', `run_id = $1 AND kind = 'sleep'`, [run.runId])) >= 3, 'polling');
    await app.client.setDeadline(run.runId, new Date());
    // A lease renewal (a third of a lease) reads the deadline: before, the execution enforced only the one it loaded.
    expect(await run.result({ timeout: '10s' })).toBe('cleanup');
    expect(ran.get(`${run.runId}:cleanup`)).toBe(1);
    expect(await db.count('steps', `run_id = $1 AND kind = 'deadline-passed'`, [run.runId])).toBe(1);
  });

  it('an operator sets a deadline on a run inside a long step: it is failed at the end of that grace, as a step under its own deadline is', async () => {
    const run = await app.client.start(SlowStep, null);
    await eventually(async () => (await app.client.getRun(run.runId)).status === 'running', 'in its step');
    await app.client.setDeadline(run.runId, new Date());
    const error = await failure(run.runId);
    expect(error).toMatchObject({ name: 'DeadlineExceededError' });
    expect(error.message).toContain('did not end within its grace of 300 ms');
  });

  it("the select's own deadline and the run's: whichever is earlier decides, across an application restart", async () => {
    const runDeadlineFirst = await app.client.start(SelectUnder, { selectDeadline: '1h' }, { timeout: '1500ms' });
    const selectDeadlineFirst = await app.client.start(SelectUnder, { selectDeadline: '1500ms' }, { timeout: '1h' });
    const bothPassed = await app.client.start(SelectUnder, { selectDeadline: '1500ms' }, { timeout: '1h' });
    for (const run of [runDeadlineFirst, selectDeadlineFirst, bothPassed])
      await eventually(async () => (await app.client.getRun(run.runId)).waiting?.kind === 'select', 'parked on the select');
    await app.close();
    // Both pass while no instance runs: the run's deadline moved (while down) to before the select's journaled one.
    const [{ at }] = await db.query<{ at: Date }>(
      `SELECT (result::jsonb ->> 'v')::timestamptz AS at FROM durable.steps WHERE run_id = $1 AND key = 'select:answer:deadline'`,
      [bothPassed.runId],
    );
    await db.query(`UPDATE durable.runs SET deadline = $2::timestamptz - interval '1 second' WHERE id = $1`, [bothPassed.runId, at]);
    await eventually(async () => Date.now() > at.getTime() + 100, "the select's deadline to pass while no instance runs");
    app = await boot();
    expect(await app.client.handle(runDeadlineFirst.runId).result({ timeout: '10s' })).toEqual({ key: 'run-deadline' });
    expect(await app.client.handle(selectDeadlineFirst.runId).result({ timeout: '10s' })).toEqual({ key: 'deadline' });
    expect(await app.client.handle(bothPassed.runId).result({ timeout: '10s' })).toEqual({ key: 'run-deadline' });
  });

  it('a queued or delayed run counts its timeout from its first execution, unless timeoutIncludesQueue', async () => {
    const blocker = await app.client.start(Timed, null);
    await eventually(async () => (await app.client.getRun(blocker.runId)).status === 'running', 'the lane taken');
    const queued = await app.client.start(Timed, null);
    const included = await app.client.start(Timed, null, { timeout: '2h', timeoutIncludesQueue: true });
    const delayed = await app.client.start(Waiter, null, { delay: '1h', timeout: '1h' });
    expect((await app.client.getRun(queued.runId)).deadline).toBeUndefined();
    expect((await app.client.getRun(delayed.runId)).deadline).toBeUndefined();
    expect((await app.client.getRun(included.runId)).deadline!.getTime() - Date.now()).toBeGreaterThan(2 * HOUR - 60_000);
    expect((await app.client.getRun(blocker.runId)).deadline!.getTime() - Date.now()).toBeGreaterThan(HOUR - 60_000);

    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the queued run's timeout must not count this second
    const opened = Date.now();
    lane.open();
    await queued.result({ timeout: '10s' });
    // Counted from its first execution: within half a second of the lane opening (the deadline is the database's
    // now at the start of the transaction that began it, read against this process's clock), not a second before.
    expect((await app.client.getRun(queued.runId)).deadline!.getTime()).toBeGreaterThanOrEqual(opened + HOUR - 500);
    await app.client.resume(delayed.runId);
    await eventually(async () => (await app.client.getRun(delayed.runId)).deadline, 'the delayed run begun with its deadline');
  });

  it('bad input: timeout and deadline both, a deadline past or invalid, a bad timeout, a deadline before a delayed or debounced start: a clear error, nothing written', async () => {
    const before = await db.count('runs');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ timeout: '1h', deadline: new Date(Date.now() + HOUR) }, /either timeout or deadline, not both/],
      [{ deadline: new Date(Date.now() - 1_000) }, /deadline must be ahead/],
      [{ deadline: new Date('nope') }, /deadline must be a valid Date/],
      [{ deadline: '2030-01-01' }, /deadline must be a valid Date/],
      [{ timeout: 'soon' }, /timeout/],
      [{ timeout: 0 }, /timeout must be more than 0/],
      [{ timeout: '1h', timeoutIncludesQueue: 'yes' }, /timeoutIncludesQueue must be a boolean/],
      // A deadline before the delayed start: the run would pass it before it began.
      [{ delay: '2h', deadline: new Date(Date.now() + HOUR) }, /deadline \(\d{4}-.+Z\) is at or before its delayed start \(\d{4}-.+Z\)/],
      [
        { startAt: new Date(Date.now() + HOUR), timeout: '30m', timeoutIncludesQueue: true },
        /is at or before its delayed start \(\d{4}-.+Z\)/,
      ],
      [{ delay: '1h', timeout: '1h', timeoutIncludesQueue: true }, /is at or before its delayed start \(\d{4}-.+Z\)/], // at its start: refused too
      // A debounced start begins after its delay, as a delayed one.
      [
        { debounce: { key: 'k', delay: '2h' }, deadline: new Date(Date.now() + HOUR) },
        /deadline \(\d{4}-.+Z\) is at or before the end of its debounce\.delay \(\d{4}-.+Z\)/,
      ],
      [
        { debounce: { key: 'k', delay: '1h' }, timeout: '30m', timeoutIncludesQueue: true },
        /deadline \(\d{4}-.+Z\) is at or before the end of its debounce\.delay \(\d{4}-.+Z\)/,
      ],
    ];
    for (const [opts, message] of cases) {
      await expect(app.client.start(Waiter, null, opts as never)).rejects.toThrow(InvalidArgumentError);
      await expect(app.client.start(Waiter, null, opts as never)).rejects.toThrow(message);
    }
    await expect(app.client.setDeadline('no-such-run', null)).rejects.toThrow(/no-such-run/);
    await expect(app.client.setDeadline('x', new Date('nope'))).rejects.toThrow(/valid Date, or null/);
    for (const far of [new Date(-8.64e15), new Date(Date.now() + 200 * 365 * 86_400_000)])
      await expect(app.client.setDeadline('x', far)).rejects.toThrow(/an instant within 100 years of now/);
    expect(await db.count('runs')).toBe(before);
  });
});

/** Opened by the test: the first call of the step, still running when the grace ends, then fails for good. */
const lateFailure = gate();
let lateCalls = 0;

@Workflow('dl-late-failure', { deadlineGrace: '300ms' })
class LateFailure implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('slow', async () => {
      if (++lateCalls > 1) return 'ok';
      await lateFailure.opened;
      throw new NonRetryableError('late');
    });
  }
}

/** Opened by the test: holds the worker's one slot while closed. */
const slotHeld = gate();

@Workflow('dl-slot-holder')
class SlotHolder implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.step('hold', () => slotHeld.opened.then(() => 'done'));
  }
}

describe('a retry after a deadline ended a run whose step was still running', () => {
  const { boot } = fileApps({ schema: uniqueSchema('dlr'), providers: [LateFailure, SlotHolder], options: { worker: { concurrency: 1 } } });

  it("fences the old attempt's late writes: the step's failure, journaled after the retry, is not the retried attempt's", async () => {
    const app = await boot();
    const run = await app.client.start(LateFailure, null, { timeout: '300ms' });
    await expect(run.result({ timeout: '10s' })).rejects.toBeInstanceOf(RunFailedError);
    // The retried attempt waits for the worker's one slot while the old attempt's step fails and journals it.
    const holder = await app.client.start(SlotHolder, null);
    await eventually(async () => (await app.client.getRun(holder.runId)).status === 'running', 'the slot to be held');
    await app.client.setDeadline(run.runId, new Date(Date.now() + HOUR));
    await app.client.retry(run.runId);
    const journal = app.get(JournalRepository);
    const checkpoint = journal.checkpoint.bind(journal);
    let spy: jest.SpyInstance | undefined;
    const late = new Promise<unknown>((written) => {
      spy = jest.spyOn(journal, 'checkpoint').mockImplementation((...args) => {
        const result = checkpoint(...args);
        if (args[0] === run.runId && args[2] === 'slow') void result.then(written, written);
        return result;
      });
    });
    try {
      lateFailure.open();
      await eventually(
        () => Promise.race([late.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 50))]),
        'the late write',
      );
      slotHeld.open();
      expect(await run.result({ timeout: '10s' })).toBe('ok');
      expect(lateCalls).toBe(2);
    } finally {
      spy?.mockRestore();
      lateFailure.open();
      slotHeld.open();
    }
  });
});

describe('a retry of a run whose deadline has passed', () => {
  const { boot } = fileApps({ schema: uniqueSchema('dlp'), providers: [Waiter], options: { deadlineGrace: '100ms' } });

  it('is refused, naming setDeadline, and changes nothing (the retried run failed again at once); once the deadline is moved it retries', async () => {
    const app = await boot();
    const run = await app.client.start(Waiter, null, { timeout: '200ms' });
    await expect(run.result({ timeout: '10s' })).rejects.toBeInstanceOf(RunFailedError);
    const failed = await app.client.getRun(run.runId);
    expect(failed.error?.name).toBe('DeadlineExceededError');

    const refused = app.client.retry(run.runId);
    await expect(refused).rejects.toBeInstanceOf(InvalidTransitionError);
    await expect(app.client.retry(run.runId)).rejects.toThrow(/deadline \(.+\) has passed.*setDeadline/);
    const unchanged = await app.client.getRun(run.runId);
    expect([unchanged.status, unchanged.attempt, unchanged.error?.name]).toEqual(['failed', failed.attempt, 'DeadlineExceededError']);

    await app.client.setDeadline(run.runId, new Date(Date.now() + HOUR));
    await app.client.retry(run.runId);
    await eventually(async () => (await app.client.getRun(run.runId)).status === 'waiting', 'the retried run to wait for its signal again');
    await app.signals.signal(run.runId, 'go', 'in time');
    expect(await run.result({ timeout: '5s' })).toBe('in time');
  });
});

describe("an operator's resume of a sleep after the run's deadline passed, no worker up meanwhile", () => {
  const schema = uniqueSchema('dlr');
  const { db, boot } = fileApps({ schema, providers: [ResumedSleep] });

  it('does not end the sleep: the run meets its deadline there, as without the resume; in the grace a resume ends the sleep', async () => {
    const first = await boot();
    const run = await first.client.start(ResumedSleep, null, { timeout: '1h' });
    const asleepIn = async (app: DurableTestApp, name: string) => {
      const waiting = (await app.client.getRun(run.runId)).waiting;
      return waiting?.kind === 'sleep' && waiting.name === name;
    };
    await eventually(() => asleepIn(first, 'nap'), 'the run asleep');
    await first.close(); // no instance executes runs when the deadline passes (a deploy, say)
    // The deadline passes while none is up: moved to now here, where a test could not close the instance before a short one.
    const operator = await boot({ worker: { enabled: false }, sweeper: false });
    await operator.client.setDeadline(run.runId, new Date());
    const napUntil = () => db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'sleep:nap'`, [run.runId]);
    const before = await napUntil();
    expect(before).toHaveLength(1);
    expect(await operator.client.resume(run.runId)).toBe(false); // nothing ended
    // Before: the nap's instant became now, and the run took its step after the nap, past its deadline.
    expect(await napUntil()).toEqual(before);
    expect(await db.count('history', `run_id = $1 AND event = 'resumed'`, [run.runId])).toBe(0);

    const worker = await boot();
    await eventually(() => asleepIn(worker, 'cleanup-nap'), 'the cleanup asleep in the grace');
    expect(ran.get(`${run.runId}:after`)).toBeUndefined();
    // The deadline met, the grace's sleep is the operator's to end as any other.
    expect(await operator.client.resume(run.runId)).toBe(true);
    expect(await worker.client.handle(run.runId).result({ timeout: '20s' })).toBe('woken by the deadline');
    expect(ran.get(`${run.runId}:after`)).toBeUndefined();
  });
});

describe('a queued run whose deadline passes before it begins', () => {
  const { db, boot } = fileApps({
    schema: uniqueSchema('dlq'),
    providers: [HeldLane, QueuedChildParent],
    options: { queues: { 'held-lane': { concurrency: 1 } }, sweeper: { intervalMs: 100, batchSize: 2 } },
  });

  it('is failed at its deadline with DeadlineExceededError, once, by any instance: never executed, holding no slot; a run without one still waits', async () => {
    const [one] = await Promise.all([boot(), boot()]); // two sweepers on one database
    const hold = gate();
    lanes.set('blocker', hold);
    const blocker = await one.client.start(HeldLane, 'blocker');
    await eventually(async () => (await one.client.getRun(blocker.runId)).status === 'running', 'the lane taken');
    const late = await Promise.all(
      [1, 2, 3, 4].map((i) => one.client.start(HeldLane, `late-${i}`, { timeout: '1s', timeoutIncludesQueue: true })),
    );
    late.push(await one.client.start(HeldLane, 'by-instant', { deadline: new Date(Date.now() + 1_000) }));
    const patient = await one.client.start(HeldLane, 'patient');
    // Before: each stayed queued past its deadline, to be admitted and run its steps once the lane opened.
    for (const run of late)
      await expect(run.result({ timeout: '15s' })).rejects.toMatchObject({
        error: {
          name: 'DeadlineExceededError',
          message: expect.stringMatching(
            /^Run ".+" passed its deadline \(\d{4}-.+Z\) while it waited in queue "held-lane", before it began\.$/,
          ),
        },
      });
    const ids = late.map((run) => run.runId);
    expect(await db.count('history', `run_id = ANY($1) AND event = 'failed'`, [ids])).toBe(5); // once each
    expect(await db.count('runs', `id = ANY($1) AND status = 'failed' AND began_at IS NULL`, [ids])).toBe(5);
    expect(await db.count('steps', 'run_id = ANY($1)', [ids])).toBe(0);
    expect(await db.count('queue_slots', 'holder = ANY($1)', [ids])).toBe(0);
    expect((await one.client.getRun(patient.runId)).status).toBe('pending');
    hold.open();
    expect(await patient.result({ timeout: '10s' })).toBe('patient');
    expect(await blocker.result({ timeout: '10s' })).toBe('blocker');
  });

  it("wakes the parent of a child it fails, which goes on with the child's failure", async () => {
    const app = await boot();
    const hold = gate();
    lanes.set('blocker', hold);
    const blocker = await app.client.start(HeldLane, 'blocker');
    await eventually(async () => (await app.client.getRun(blocker.runId)).status === 'running', 'the lane taken');
    const parent = await app.client.start(QueuedChildParent, null);
    await eventually(
      async () => (await app.client.getRun(parent.runId)).waiting?.kind === 'child',
      'the parent parked on its queued child',
    );
    const [child] = await db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE parent_id = $1`, [parent.runId]);
    await app.client.setDeadline(child.id, new Date(Date.now() - 1_000)); // the parent has none: only the expiry's wake can end its wait
    expect(await parent.result({ timeout: '10s' })).toBe('child failed: DeadlineExceededError');
    expect(await db.count('runs', `id = $1 AND status = 'failed' AND began_at IS NULL`, [child.id])).toBe(1);
    hold.open();
    expect(await blocker.result({ timeout: '10s' })).toBe('blocker');
  });
});

/** Parks on a signal in the held lane's queue; at its deadline, would clean up in a step. */
@Workflow('dl-queued-cleanup', { queue: 'held-lane', deadlineGrace: '300ms' })
class QueuedCleanup implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.waitForSignal('approval');
      return 'approved';
    } catch (error) {
      if (!isDeadline(error)) throw error;
      return ctx.step('cleanup', () => count(ctx.runId, 'cleanup'));
    }
  }
}

describe('a queued run that began, and whose grace ends while it waits for a slot', () => {
  const { db, boot } = fileApps({
    schema: uniqueSchema('dlg'),
    providers: [HeldLane, QueuedCleanup],
    options: { queues: { 'held-lane': { concurrency: 1 } }, inlineWaitMs: 0, sweeper: { intervalMs: 100 } },
  });

  it('is failed at the end of its grace, once, by any instance, while the slot stays taken', async () => {
    const [one] = await Promise.all([boot(), boot()]); // two sweepers on one database
    const run = await one.client.start(QueuedCleanup, null);
    await eventually(async () => (await one.client.getRun(run.runId)).waiting?.kind === 'signal', 'parked on its signal');
    const hold = gate();
    lanes.set('blocker', hold);
    const blocker = await one.client.start(HeldLane, 'blocker');
    await eventually(async () => (await one.client.getRun(blocker.runId)).status === 'running', 'the lane taken');
    await one.client.setDeadline(run.runId, new Date(Date.now() + 200));
    // Woken by its deadline, it waits for the lane the blocker holds. Before: it stayed pending past its grace, for as
    // long as the lane was taken, and was failed only when admitted.
    await expect(run.result({ timeout: '15s' })).rejects.toMatchObject({
      error: {
        name: 'DeadlineExceededError',
        message: expect.stringMatching(
          /^Run ".+" passed its deadline \(\d{4}-.+Z\) and did not end within its grace of 300 ms: it waited for a slot of queue "held-lane" meanwhile\.$/,
        ),
      },
    });
    expect((await one.client.getRun(blocker.runId)).status).toBe('running');
    expect(await db.count('history', `run_id = $1 AND event = 'failed'`, [run.runId])).toBe(1);
    expect(ran.get(`${run.runId}:cleanup`)).toBeUndefined(); // no slot came in its grace
    hold.open();
    expect(await blocker.result({ timeout: '10s' })).toBe('blocker');
  });
});

/** The error of a run failed before it began, having waited `waited` (a pattern). */
const failedBeforeItBegan = (waited: string) => ({
  error: {
    name: 'DeadlineExceededError',
    message: expect.stringMatching(
      new RegExp(`^Run ".+" passed its deadline \\(\\d{4}-.+Z\\) while it waited ${waited}, before it began\\.$`),
    ),
  },
});

/**
 * A run no claim or admission began past its deadline, with no sweeper up: still `status`, never begun,
 * without a step, until an instance with a sweeper, booted now, fails it.
 */
async function expectLeftForASweeper(apps: ReturnType<typeof fileApps>, run: RunHandle<unknown>, status: 'pending' | 'waiting') {
  expect(await apps.db.count('runs', `id = $1 AND status = $2 AND began_at IS NULL`, [run.runId, status])).toBe(1);
  expect(await apps.db.count('steps', 'run_id = $1', [run.runId])).toBe(0);
  await apps.boot({ sweeper: { intervalMs: 100 } });
  await expect(run.result({ timeout: '10s' })).rejects.toMatchObject({ error: { name: 'DeadlineExceededError' } });
}

describe('a queued run whose deadline passed, with no sweeper up', () => {
  const apps = fileApps({
    schema: uniqueSchema('dlq'),
    providers: [HeldLane],
    options: { queues: { 'held-lane': { concurrency: 1 } }, sweeper: false },
  });

  it('is not admitted: the slot that frees goes to the run behind it; a sweeper then fails it', async () => {
    const app = await apps.boot();
    const hold = gate();
    lanes.set('held', hold);
    const blocker = await app.client.start(HeldLane, 'held');
    await eventually(async () => (await app.client.getRun(blocker.runId)).status === 'running', 'the lane taken');
    const late = await app.client.start(HeldLane, 'late', { timeout: '1s', timeoutIncludesQueue: true });
    const behind = await app.client.start(HeldLane, 'behind');
    const { deadline } = await app.client.getRun(late.runId);
    await eventually(async () => Date.now() > deadline!.getTime() + 200, 'the deadline to pass');
    hold.open();
    // Before: the freed slot admitted the late run, which ran past its deadline.
    expect(await behind.result({ timeout: '10s' })).toBe('behind');
    await expectLeftForASweeper(apps, late, 'pending');
  });
});

describe('a run outside a queue whose deadline passes before it begins', () => {
  const { db, boot } = fileApps({
    schema: uniqueSchema('dlu'),
    providers: [Unqueued],
    options: { worker: { concurrency: 1 }, sweeper: { intervalMs: 100 } },
  });
  it('is failed at its deadline, once, by any instance, never begun: a delayed start whose deadline an operator moved before it, a debounced start moved past its deadline, a pending run no worker was free for', async () => {
    const [one, two] = await Promise.all([boot(), boot()]); // two sweepers on one database
    const delayed = await one.client.start(Unqueued, 'delayed', { delay: '1h' });
    await one.client.setDeadline(delayed.runId, new Date(Date.now() - 1_000)); // a past instant counts as now
    // Its deadline is 1 s after its start; a start with the key and a longer delay moves the start past it.
    const debounced = await one.client.start(Unqueued, 'debounced', {
      debounce: { key: 'k', delay: '5s' },
      deadline: new Date(Date.now() + 6_000),
    });
    await expect(one.client.start(Unqueued, 'debounced again', { debounce: { key: 'k', delay: '8s' } })).resolves.toMatchObject({
      runId: debounced.runId,
      created: false,
    });
    // Both instances' one slot taken: the next run waits pending for a worker.
    const holds = [gate(), gate()];
    lanes.set('hold-1', holds[0]);
    lanes.set('hold-2', holds[1]);
    const held = [await one.client.start(Unqueued, 'hold-1'), await two.client.start(Unqueued, 'hold-2')];
    for (const run of held) await eventually(async () => (await one.client.getRun(run.runId)).status === 'running', 'a slot taken');
    const pending = await one.client.start(Unqueued, 'for a worker', { deadline: new Date(Date.now() + 500) });

    // Before: none was failed (the delayed run would begin in an hour, the debounced one at its moved start, the pending one once a slot freed).
    await expect(delayed.result({ timeout: '10s' })).rejects.toMatchObject(failedBeforeItBegan('for its delayed start \\(.+Z\\)'));
    await expect(pending.result({ timeout: '10s' })).rejects.toMatchObject(failedBeforeItBegan('for a worker'));
    await expect(debounced.result({ timeout: '15s' })).rejects.toMatchObject(failedBeforeItBegan('for its delayed start \\(.+Z\\)'));
    const ids = [delayed.runId, debounced.runId, pending.runId];
    expect(await db.count('history', `run_id = ANY($1) AND event = 'failed'`, [ids])).toBe(3); // once each
    expect(await db.count('runs', `id = ANY($1) AND status = 'failed' AND began_at IS NULL`, [ids])).toBe(3);
    expect(await db.count('steps', 'run_id = ANY($1)', [ids])).toBe(0);
    holds.forEach((hold) => hold.open());
    for (const run of held) await expect(run.result({ timeout: '10s' })).resolves.toMatch(/^hold-/);
  }, 45_000);
});

describe('a delayed start whose deadline passed, with no sweeper up', () => {
  const apps = fileApps({ schema: uniqueSchema('dlu'), providers: [Unqueued], options: { sweeper: false } });

  it('is not begun when its start comes; a sweeper then fails it', async () => {
    const app = await apps.boot();
    const run = await app.client.start(Unqueued, 'late start', { delay: '3s' });
    await app.client.setDeadline(run.runId, new Date(Date.now() + 300));
    // Started after it with the same delay and no deadline: once it has run, the claim at the late run's start has come.
    const witness = await app.client.start(Unqueued, 'witness', { delay: '3s' });
    expect(await witness.result({ timeout: '15s' })).toBe('witness');
    // Before: the claim at its start began it past its deadline.
    await expectLeftForASweeper(apps, run, 'waiting');
  });
});

describe('a resume of a delayed start whose deadline passed, with no sweeper up', () => {
  const apps = fileApps({ schema: uniqueSchema('dlu'), providers: [Unqueued], options: { sweeper: false } });

  it('does not make it due: nothing is ended or recorded, and a sweeper fails it', async () => {
    const app = await apps.boot();
    const run = await app.client.start(Unqueued, 'resumed late', { delay: '1h' });
    await app.client.setDeadline(run.runId, new Date(Date.now() - 1_000));
    const wakeAt = () => apps.db.query(`SELECT wake_at FROM durable.runs WHERE id = $1`, [run.runId]);
    const before = await wakeAt();
    // Before: answered true and made it due now, for the sweeper to fail it all the same.
    expect(await app.client.resume(run.runId)).toBe(false);
    expect(await wakeAt()).toEqual(before);
    expect(await apps.db.count('history', `run_id = $1 AND event = 'resumed'`, [run.runId])).toBe(0);
    await expectLeftForASweeper(apps, run, 'waiting');
  });
});

describe('a debounced start whose key is held by a run past its deadline, with no sweeper up', () => {
  const { db, boot } = fileApps({ schema: uniqueSchema('dlu'), providers: [Unqueued], options: { sweeper: false } });

  it('makes a new run instead of joining it, once for concurrent starts; the old run is failed by the start that found it, never begun', async () => {
    const app = await boot();
    const doomed = await app.client.start(Unqueued, 'doomed', { debounce: { key: 'd', delay: '1h' } });
    await app.client.setDeadline(doomed.runId, new Date(Date.now() - 1_000)); // a past instant counts as now
    // Before c90a867: each joined the doomed run, whose input would never run (with no sweeper, nor any later start's with the key).
    const starts = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => app.client.start(Unqueued, `next-${i}`, { debounce: { key: 'd', delay: '500ms' } })),
    );
    expect(starts.filter((start) => start.created)).toHaveLength(1);
    expect(new Set(starts.map((start) => start.runId)).size).toBe(1);
    expect(starts[0].runId).not.toBe(doomed.runId);
    // Failed by the start, once, with no sweeper up (before: it only gave up the key and waited for one; a claim
    // that had read it as due before its deadline could still begin it).
    await expect(doomed.result({ timeout: '5s' })).rejects.toMatchObject(failedBeforeItBegan('for its delayed start \\(.+Z\\)'));
    expect(await db.count('runs', `id = $1 AND status = 'failed' AND began_at IS NULL AND debounce_key = 'd'`, [doomed.runId])).toBe(1);
    expect(await db.count('history', `run_id = $1 AND event = 'failed'`, [doomed.runId])).toBe(1);
    expect(await starts[0].result({ timeout: '10s' })).toMatch(/^next-[1-5]$/);
    expect(await db.count('steps', 'run_id = $1', [doomed.runId])).toBe(0);

    // Retried, while a newer run holds the key, it runs its own input, no longer a debounce's run (before: a unique violation).
    const holder = await app.client.start(Unqueued, 'holder', { debounce: { key: 'd', delay: '1h' } });
    await app.client.setDeadline(doomed.runId, null);
    await app.client.retry(doomed.runId);
    expect(await doomed.result({ timeout: '10s' })).toBe('doomed');
    expect((await app.client.getRun(holder.runId)).waiting?.kind).toBe('start');
    await app.client.cancel(holder.runId);
  });
});

/** Cleanup in the grace that parks twice, so the run executes again in it; then asks whether it runs new code. */
async function parkingCleanup(ctx: WorkflowContext) {
  await ctx.waitForSignal('a');
  await ctx.waitForSignal('b'); // parked after a re-execution in the grace: the run's warning is worked out here
  return { patched: await ctx.patched('new-cleanup') };
}

/** The deadline passes in a sleep, a select with a timer, or a timed signal wait; each then cleans up. */
const underDeadline = (name: string, wait: (ctx: WorkflowContext) => Promise<unknown>) => {
  @Workflow(name, { deadlineGrace: '30s' })
  class UnderDeadline implements DurableWorkflow<null, unknown> {
    async run(_: null, ctx: WorkflowContext) {
      try {
        return await wait(ctx);
      } catch (error) {
        if (!isDeadline(error)) throw error;
        return parkingCleanup(ctx);
      }
    }
  }
  return UnderDeadline;
};
const SleepPast = underDeadline('dl-sleep-past', (ctx) => ctx.sleep('long', '1h'));
const SelectPast = underDeadline('dl-select-past', (ctx) =>
  ctx.select('pick', { reminder: ctx.timer('1h'), go: ctx.signal('go') }, { deadline: '2h' }),
);
const TimedPast = underDeadline('dl-timed-past', (ctx) => ctx.waitForSignal('go', { timeout: '1h' }));

/** Two waits awaited together when the deadline passes: both throw it. */
@Workflow('dl-both-past', { deadlineGrace: '30s' })
class BothPast implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await Promise.all([ctx.waitForSignal('approval'), ctx.waitForSignal('payment')]);
      return 'both';
    } catch (error) {
      if (!isDeadline(error)) throw error;
      await ctx.step('refund', () => count(ctx.runId, 'refund'));
      await ctx.waitForSignal('cleanup-done');
      return 'cleaned up';
    }
  }
}
/** Holds a wait for its cleanup and awaits it only after the cleanup's step and park: the deadline is thrown at it meanwhile. */
@Workflow('dl-held-past', { deadlineGrace: '30s' })
class HeldPast implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const shipped = ctx.waitForSignal('shipped');
    try {
      await ctx.waitForSignal('approval');
      return 'approved';
    } catch (error) {
      if (!isDeadline(error)) throw error;
      await ctx.step('refund', () => count(ctx.runId, 'refund'));
      await ctx.waitForSignal('cleanup-done');
      return shipped.then(
        () => 'shipped',
        (held) => (isDeadline(held) ? 'cleaned up; the held wait threw it' : 'other'),
      );
    }
  }
}

/** A consume loop whose handling of a message outlasts the deadline: the receive after it throws. */
@Workflow('dl-consume-past', { deadlineGrace: '30s' })
class ConsumePast implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.consume<string>('events', () => new Promise((resolve) => setTimeout(resolve, 1_200)), {
        until: (m) => m.payload === 'done',
      });
      return 'consumed';
    } catch (error) {
      if (!isDeadline(error)) throw error;
      await ctx.step('refund', () => count(ctx.runId, 'refund'));
      await ctx.receive('events'); // the cleanup's own receive on the channel: it waits, it does not throw again
      await ctx.waitForSignal('cleanup-done');
      return 'cleaned up';
    }
  }
}

describe('a re-execution in the grace throws the deadline where the execution that passed it threw it', () => {
  const { db, boot } = fileApps({
    schema: uniqueSchema('dlx'),
    providers: [SleepPast, SelectPast, TimedPast, BothPast, HeldPast, ConsumePast],
    options: { inlineWaitMs: 0 },
  });
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await boot();
  });
  const waitingFor = async (runId: string) => {
    const waiting = (await app.client.getRun(runId)).waiting;
    return waiting && 'name' in waiting ? waiting.name : waiting && 'channel' in waiting ? `channel ${waiting.channel}` : undefined;
  };

  const throwingWaits = [
    ['a sleep', SleepPast],
    ['a select with a timer', SelectPast],
    ['a timed signal wait', TimedPast],
  ] as const;
  for (const [where, workflow] of throwingWaits)
    it(`at ${where}: the wait's own instants count as reached (no warning; patched() is true in a run of this code only)`, async () => {
      const run = await app.client.start(workflow, null, { timeout: '300ms' });
      await eventually(async () => (await waitingFor(run.runId)) === 'a', 'cleaning up, parked on a');
      await app.signals.signal(run.runId, 'a', null);
      await eventually(async () => (await waitingFor(run.runId)) === 'b', 'parked on b after a re-execution');
      // Before: the instant journaled by the wait that threw was passed over on replay, so it read as stranded.
      expect((await app.client.getRun(run.runId)).warning).toBeUndefined();
      await app.signals.signal(run.runId, 'b', null);
      expect(await run.result({ timeout: '10s' })).toEqual({ patched: true });
    });

  it('two waits awaited together both threw it: the re-execution throws at either, and goes on with the cleanup', async () => {
    const run = await app.client.start(BothPast, null, { timeout: '300ms' });
    await eventually(async () => (await waitingFor(run.runId)) === 'cleanup-done', 'cleaning up');
    // The second throw's key is added by a write of its own, which may commit after the cleanup parked.
    const thrownAt = async () => {
      const [{ error }] = await db.query<{ error: { at: string; also?: string[] } }>(
        `SELECT error FROM durable.steps WHERE run_id = $1 AND key = 'run-deadline:passed'`,
        [run.runId],
      );
      return [error.at, ...(error.also ?? [])].sort();
    };
    await eventually(async () => (await thrownAt()).length === 2, 'both calls journaled');
    expect(await thrownAt()).toEqual(['signal:approval', 'signal:payment']);
    await app.signals.signal(run.runId, 'cleanup-done', null);
    // Before: only the first was journaled; the re-execution parked on the other and was failed at the grace's end.
    expect(await run.result({ timeout: '10s' })).toBe('cleaned up');
    expect(ran.get(`${run.runId}:refund`)).toBe(1);
  });

  it('a wait held unawaited for the cleanup throws it where the cleanup awaits it, never as an unhandled rejection', async () => {
    const run = await app.client.start(HeldPast, null, { timeout: '300ms' });
    await eventually(async () => (await waitingFor(run.runId)) === 'cleanup-done', 'cleaning up');
    await eventually(
      async () => (await db.count('steps', `run_id = $1 AND key = 'run-deadline:passed' AND error->'also' IS NOT NULL`, [run.runId])) === 1,
      'both calls journaled',
    );
    await app.signals.signal(run.runId, 'cleanup-done', null);
    // Before: the held wait's rejection had no handler yet, in the execution that passed the deadline and again in the
    // re-execution, an unhandled rejection (which stops a Node process; jest fails the test with it).
    expect(await run.result({ timeout: '10s' })).toBe('cleaned up; the held wait threw it');
    expect(ran.get(`${run.runId}:refund`)).toBe(1);
  });

  it("in a consume loop: the re-execution throws at the channel's first receive, though the messages handled before are acked and gone", async () => {
    const run = await app.client.start(ConsumePast, null);
    await eventually(async () => (await waitingFor(run.runId)) === 'channel events', 'consuming');
    await app.signals.send(run.runId, 'events', 'm1', 'first');
    // It passes while m1 is handled (1.2 s), or before, when m1 is then received at once: either way the next receive throws.
    await app.client.setDeadline(run.runId, new Date(Date.now() + 300));
    await eventually(
      async () => (await waitingFor(run.runId)) === 'channel events' && ran.has(`${run.runId}:refund`),
      "the cleanup's receive",
    );
    await app.signals.send(run.runId, 'events', 'm2', 'second');
    await eventually(async () => (await waitingFor(run.runId)) === 'cleanup-done', 'cleaning up, past its own receive');
    await app.signals.signal(run.runId, 'cleanup-done', null);
    // Before: the re-execution's receive was counted #1 where the one that threw was #2; it parked on the channel, and a
    // closing message then ended the run down the path it had left.
    expect(await run.result({ timeout: '10s' })).toBe('cleaned up');
    expect(ran.get(`${run.runId}:refund`)).toBe(1);
  });
});
