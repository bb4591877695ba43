import { DurableWorkflow, NonRetryableError, Step, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { checkpointBatchSql, checkpointSql } from 'nestjs-durable/persistence/sql/checkpoint.sql';
import { END_PARTS, finishRunSql, finishRunsSql } from 'nestjs-durable/persistence/sql/finish-run.sql';
import { Client } from 'pg';
import { databaseUrl, DurableTestApp, eventually, fileApps, uniqueSchema } from '../setup/durable-app';

/** Step bodies that ran, as `runId:step`. */
const effects: string[] = [];
const ran = (runId: string, step: string) => effects.filter((e) => e === `${runId}:${step}`).length;
/** What a step does besides recording its effect (the test sets it per run). */
const during = new Map<string, () => Promise<void>>();
const gates = new Map<string, () => void>();

@Workflow('three-in-a-row')
class ThreeInARow implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => effects.push(`${ctx.runId}:a`));
    await ctx.step('b', () => effects.push(`${ctx.runId}:b`));
    await ctx.step('c', async () => {
      effects.push(`${ctx.runId}:c`);
      await during.get(ctx.runId)?.();
    });
    return 'done';
  }
}

/** A step, then code that waits on something that is not durable, then the end. */
@Workflow('step-then-slow-code')
class StepThenSlowCode implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => effects.push(`${ctx.runId}:a`));
    await new Promise<void>((open) => gates.set(ctx.runId, open));
    return 'done';
  }
}

@Workflow('step-then-throw')
class StepThenThrow implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext): Promise<string> {
    await ctx.step('a', () => effects.push(`${ctx.runId}:a`));
    throw new NonRetryableError('no');
  }
}

/** Steps whose checkpoints another writer could hold: two in parallel, and one under an explicit key. */
@Workflow('shared-keys')
class SharedKeys implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await Promise.all([ctx.step('x', () => 1), ctx.step('y', () => 2)]);
    return this.keyed('k');
  }
  @Step('keyed', { key: (k: string) => k }) async keyed(k: string) {
    return k;
  }
}

/** A select's winner, returned at once: its checkpoint may ride with the end. */
@Workflow('select-then-return')
class SelectThenReturn implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const won = await ctx.select('pick', { go: ctx.signal<string>('go'), hour: ctx.timer('1h') });
    return won.key;
  }
}

/** A select's winner, then a step: the winner is written before the step runs. */
@Workflow('select-then-step')
class SelectThenStep implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const won = await ctx.select('pick', { go: ctx.signal<string>('go'), hour: ctx.timer('1h') });
    await ctx.step('after', async () => {
      effects.push(`${ctx.runId}:after`);
      await during.get(ctx.runId)?.();
    });
    return won.key;
  }
}

describe("the last step's checkpoint rides with the run's end", () => {
  const schema = uniqueSchema();
  const { db, boot } = fileApps({
    schema,
    providers: [ThreeInARow, StepThenSlowCode, StepThenThrow, SharedKeys, SelectThenReturn, SelectThenStep],
  });
  let app: DurableTestApp;
  let database: DurableDatabase;
  /** The statements this instance sends from now on, by kind, with the run they are for. */
  const watch = () => {
    const t = database.tables;
    const kinds = new Map([
      [checkpointSql(t), 'checkpoint'],
      [checkpointBatchSql(t), 'checkpoint'],
      ...END_PARTS.flatMap((parts) => [finishRunSql(t, parts), finishRunsSql(t, parts)].map((sql) => [sql, 'end'] as const)),
    ]);
    // Watched, not replaced: every statement runs as ever.
    const spies = [jest.spyOn(database, 'query')];
    /** The watched statements for `runId`, in the order they were sent. */
    const sentFor = (runId: string) =>
      spies
        .flatMap((spy) =>
          (spy.mock.calls as unknown as Array<[string, unknown[]]>).map((call, i) => ({ call, at: spy.mock.invocationCallOrder[i] })),
        )
        .sort((a, b) => a.at - b.at)
        .map(({ call: [sql, params] }) => ({ kind: kinds.get(sql), params }))
        .filter(({ kind, params }) => kind && JSON.stringify(params).includes(runId));
    const of = (runId: string, kind: string) => sentFor(runId).filter((s) => s.kind === kind);
    const order = (runId: string) => sentFor(runId).map((s) => s.kind);
    return { of, order };
  };
  const stepsOf = (runId: string) =>
    db.query<{ key: string; outcome: string; started_at: Date | null }>(
      `SELECT key, outcome, started_at FROM durable.steps WHERE run_id = $1 ORDER BY key`,
      [runId],
    );

  beforeAll(async () => {
    app = await boot();
    database = app.get(DurableDatabase);
  });
  afterEach(() => jest.restoreAllMocks());

  it('a run of three steps commits four times: two checkpoints, then the third with the end, in its statement', async () => {
    const sent = watch();
    const run = await app.client.start(ThreeInARow, null);
    expect(await run.result()).toBe('done');
    expect(sent.of(run.runId, 'checkpoint')).toHaveLength(2);
    const [end] = sent.of(run.runId, 'end');
    expect(JSON.stringify(end.params)).toContain('"key\\":\\"c\\"');
    const steps = await stepsOf(run.runId);
    expect(steps.map((s) => [s.key, s.outcome])).toEqual([
      ['a', 'ok'],
      ['b', 'ok'],
      ['c', 'ok'],
    ]);
    expect(steps.every((s) => s.started_at instanceof Date)).toBe(true);
    expect(['a', 'b', 'c'].map((step) => ran(run.runId, step))).toEqual([1, 1, 1]);
  });

  it('an end refused for a lost lease writes no checkpoint: the worker that takes the run over runs that step again', async () => {
    const other = new Client(databaseUrl());
    await other.connect();
    try {
      const run = await app.client.start(ThreeInARow, null);
      // While step c runs, another worker takes the run over and dies at once: its lease lapses now.
      during.set(run.runId, async () => {
        during.delete(run.runId);
        await other.query(
          `UPDATE "${schema}".runs SET lease_token = lease_token + 1, lease_owner = 'elsewhere', wake_at = now() WHERE id = $1`,
          [run.runId],
        );
      });
      expect(await run.result({ timeout: '20s' })).toBe('done');
      // The first end was refused with its checkpoint: c ran again, within its crash window; a and b were replayed.
      expect(['a', 'b', 'c'].map((step) => ran(run.runId, step))).toEqual([1, 1, 2]);
      expect((await stepsOf(run.runId)).map((s) => s.key)).toEqual(['a', 'b', 'c']);
    } finally {
      await other.end();
    }
  });

  it('a step followed by code that waits on something else is checkpointed at the end of its turn, not held back', async () => {
    const run = await app.client.start(StepThenSlowCode, null);
    await eventually(async () => gates.has(run.runId), 'the code after the step to wait');
    await eventually(async () => (await stepsOf(run.runId)).length === 1, "step a's checkpoint");
    gates.get(run.runId)!();
    expect(await run.result()).toBe('done');
  });

  it('a run that fails after a step writes that checkpoint before the failure', async () => {
    const sent = watch();
    const run = await app.client.start(StepThenThrow, null);
    await expect(run.result()).rejects.toThrow('no');
    expect((await stepsOf(run.runId)).map((s) => s.key)).toEqual(['a']);
    // Its own statement, before the end's (which carries none): not one written late, at the end of a turn.
    expect(sent.order(run.runId)).toEqual(['checkpoint', 'end']);
    expect(JSON.stringify(sent.of(run.runId, 'end')[0].params)).not.toContain('"key');
  });

  const parkedOnSelect = async (workflow: typeof SelectThenReturn | typeof SelectThenStep) => {
    const run = await app.client.start(workflow, null);
    await eventually(async () => (await app.client.getRun(run.runId)).waiting?.kind === 'select', 'parked on the select');
    return run;
  };

  it("a select's winner rides with the run's end when the run returns after it: no checkpoint statement of its own", async () => {
    const run = await parkedOnSelect(SelectThenReturn);
    const sent = watch();
    await app.signals.signal(run.runId, 'go', 'now');
    expect(await run.result()).toBe('go');
    expect(sent.of(run.runId, 'checkpoint')).toHaveLength(0);
    expect(JSON.stringify(sent.of(run.runId, 'end')[0].params)).toContain('select:pick');
    const [winner] = await db.query<{ kind: string; result: string }>(
      `SELECT kind, result FROM durable.steps WHERE run_id = $1 AND key = 'select:pick'`,
      [run.runId],
    );
    expect(winner.kind).toBe('select');
    expect(JSON.parse(winner.result)).toMatchObject({ key: 'go', value: 'now' });
  });

  it("a select's winner is committed before the step that follows it runs", async () => {
    const run = await parkedOnSelect(SelectThenStep);
    let storedWhenStepRan: number | undefined;
    during.set(run.runId, async () => {
      storedWhenStepRan = (await db.query(`SELECT 1 FROM durable.steps WHERE run_id = $1 AND key = 'select:pick'`, [run.runId])).length;
    });
    const sent = watch();
    await app.signals.signal(run.runId, 'go', 'now');
    expect(await run.result()).toBe('go');
    expect(storedWhenStepRan).toBe(1);
    expect(ran(run.runId, 'after')).toBe(1);
    expect(sent.order(run.runId)).toEqual(['checkpoint', 'end']);
    expect(JSON.stringify(sent.of(run.runId, 'checkpoint')[0].params)).toContain('select:pick');
  });

  it('steps that run in parallel or under an explicit key are each checkpointed before they return, not with the end', async () => {
    const sent = watch();
    const run = await app.client.start(SharedKeys, null);
    expect(await run.result()).toBe('k');
    expect(sent.of(run.runId, 'checkpoint')).toHaveLength(3);
    expect(JSON.stringify(sent.of(run.runId, 'end')[0].params)).not.toContain('"key');
    expect((await stepsOf(run.runId)).map((s) => s.key)).toEqual(['keyed:k', 'x', 'y']);
  });
});
