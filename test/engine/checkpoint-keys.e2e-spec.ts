import { Injectable } from '@nestjs/common';
import { DurableWorkflow, ScheduleService, Step, Workflow, WorkflowContext } from 'nestjs-durable';
import { KEY_FORMAT } from 'nestjs-durable/durable.constants';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** Effects by run and name, in this process: what ran, and how often. */
const effects: string[] = [];
const effect = (runId: string, what: string) => {
  effects.push(`${runId}:${what}`);
  return what;
};
const countOf = (runId: string, what: string) => effects.filter((e) => e === `${runId}:${what}`).length;

/**
 * Names that joined raw would meet other keys: `go#2` and the second `go`, the inline step `charge:a`
 * and the step `charge` keyed `a`. Fails its first attempt, so the second re-executes from the top.
 */
@Workflow('ck-names', { retry: { maxAttempts: 2, initialDelay: '10ms' } })
class Names implements DurableWorkflow<null, string[]> {
  async run(_: null, ctx: WorkflowContext) {
    const seen = [
      await ctx.step('go', () => effect(ctx.runId, 'go 1')),
      await ctx.step('go#2', () => effect(ctx.runId, 'go#2')),
      await ctx.step('go', () => effect(ctx.runId, 'go 2')),
      await this.charge(ctx.runId, 'a'),
      await this.charge(ctx.runId, 'b:c'),
      await ctx.step('charge:a', () => effect(ctx.runId, 'inline charge:a')),
      await ctx.step('100%', () => effect(ctx.runId, '100%')),
      await ctx.step('100%25', () => effect(ctx.runId, '100%25')),
    ];
    if (ctx.attempt === 1) throw new Error('replay me');
    return seen;
  }

  @Step('charge', { key: (_: string, id: string) => id })
  async charge(runId: string, id: string): Promise<string> {
    return effect(runId, `charge keyed ${id}`);
  }
}

/** A signal wait that times out, then one on a signal named as that timeout's mark (`x:timed-out`). */
@Workflow('ck-deadlines')
class Deadlines implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const first = await ctx.waitForSignal<string>('x', { timeout: '50ms' });
    const second = await ctx.waitForSignal<string>('x:timed-out', { timeout: '1h' });
    return { first, second };
  }
}

/** A step whose name holds a colon, a signal, then a step: a run of it is turned into one an earlier version began. */
@Workflow('ck-legacy')
class Legacy implements DurableWorkflow<null, string[]> {
  async run(_: null, ctx: WorkflowContext) {
    const charged = await ctx.step('stripe:charge', () => effect(ctx.runId, 'stripe:charge'));
    const go = await ctx.waitForSignal<string>('go');
    const shipped = await ctx.step('ship', () => effect(ctx.runId, 'ship'));
    return [charged, go, shipped];
  }
}

/** Steps named as a primitive's keys: `set-keys`, or a primitive's prefix with a key option. */
@Workflow('ck-reserved', { retry: { maxAttempts: 1 } })
class Reserved implements DurableWorkflow<{ name: string; keyed: boolean }, unknown> {
  async run(input: { name: string; keyed: boolean }, ctx: WorkflowContext) {
    return ctx.step(input.name, () => effect(ctx.runId, input.name), input.keyed ? { key: () => 'nap' } : {});
  }
}

@Injectable()
class Napper {
  @Step('sleep', { key: (at: string) => at })
  async nap(at: string): Promise<string> {
    return at;
  }
}

@Workflow('ck-plain')
class Plain implements DurableWorkflow<null, null> {
  async run() {
    return null;
  }
}

@Workflow('ck-parent')
class Parent implements DurableWorkflow<null, null> {
  async run(_: null, ctx: WorkflowContext) {
    return (await ctx.startChild(Plain, null, { step: 'kid' })).result();
  }
}

describe('checkpoint keys: names are escaped, and a run keeps the key format it began with', () => {
  const schema = uniqueSchema('ck');
  const db = new Db(schema);
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await startApp({
      schema,
      providers: [Names, Deadlines, Legacy, Plain, Parent, Reserved],
      options: { queues: { one: { concurrency: 1 } } },
    });
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  const keysOf = async (runId: string) =>
    (await db.query<{ key: string }>(`SELECT key FROM durable.steps WHERE run_id = $1`, [runId])).map((r) => r.key).sort();

  it("names holding '%', ':' or '#' meet no other call's key: each step runs once, and again not at all on re-execution", async () => {
    const run = await app.client.start(Names, null);
    const effects = ['go 1', 'go#2', 'go 2', 'charge keyed a', 'charge keyed b:c', 'inline charge:a', '100%', '100%25'];
    expect(await run.result({ timeout: '10s' })).toEqual(effects);
    for (const what of effects) expect(countOf(run.runId, what)).toBe(1);
    // A step's key option ends the key raw (nothing follows it to meet): `charge:b:c`.
    expect(await keysOf(run.runId)).toEqual(['100%2525', '100%25', 'charge%3Aa', 'charge:a', 'charge:b:c', 'go', 'go#2', 'go%232'].sort());
    expect(await db.query(`SELECT key_format FROM durable.runs WHERE id = $1`, [run.runId])).toEqual([{ key_format: KEY_FORMAT }]);
  });

  it("a signal named as another wait's timeout mark waits for its own delivery", async () => {
    const run = await app.client.start(Deadlines, null);
    await eventually(async () => {
      const { waiting } = await app.client.getRun(run.runId);
      return waiting?.kind === 'signal' && waiting.name === 'x:timed-out';
    }, 'waiting on the second signal');
    await app.signals.signal(run.runId, 'x:timed-out', 'mine');
    expect(await run.result({ timeout: '10s' })).toEqual({ first: { received: false }, second: { received: true, payload: 'mine' } });
  });

  it('a run an earlier version began (key format 1) is re-executed with the raw keys its journal holds, and its fork keeps them', async () => {
    const run = await app.client.start(Legacy, null);
    await eventually(async () => (await app.client.getRun(run.runId)).status === 'waiting', 'waiting for go');
    expect(await keysOf(run.runId)).toEqual(['stripe%3Acharge']);
    // What the run would hold had a version before key format 2 begun it.
    await db.query(`UPDATE durable.steps SET key = 'stripe:charge' WHERE run_id = $1`, [run.runId]);
    await db.query(`UPDATE durable.runs SET key_format = 1 WHERE id = $1`, [run.runId]);
    await app.signals.signal(run.runId, 'go', 'now');
    expect(await run.result({ timeout: '10s' })).toEqual(['stripe:charge', 'now', 'ship']);
    expect(countOf(run.runId, 'stripe:charge')).toBe(1);
    expect(await keysOf(run.runId)).toEqual(['ship', 'stripe:charge']);

    const fork = await app.client.fork(run.runId, { fromStep: 'ship' });
    expect(await fork.result({ timeout: '10s' })).toEqual(['stripe:charge', 'now', 'ship']);
    expect(countOf(fork.runId, 'stripe:charge')).toBe(0);
    expect(await db.query(`SELECT key_format FROM durable.runs WHERE id = $1`, [fork.runId])).toEqual([{ key_format: 1 }]);
  });

  it('a fork of a run of this version keeps its escaped keys', async () => {
    const run = await app.client.start(Legacy, null);
    await eventually(async () => (await app.client.getRun(run.runId)).status === 'waiting', 'waiting for go');
    await app.signals.signal(run.runId, 'go', 'now');
    await run.result({ timeout: '10s' });
    const fork = await app.client.fork(run.runId, { fromStep: 'ship' });
    expect(await fork.result({ timeout: '10s' })).toEqual(['stripe:charge', 'now', 'ship']);
    expect(countOf(fork.runId, 'stripe:charge')).toBe(0);
    expect(await keysOf(fork.runId)).toEqual(['ship', 'stripe%3Acharge']);
  });

  it("a step named as a primitive's keys is refused: 'set-keys', or a primitive's prefix with a key option (in the run, and at boot)", async () => {
    for (const [name, keyed] of [
      ['set-keys', false],
      ['sleep', true],
      ['run-deadline', true],
    ] as const) {
      const run = await app.client.start(Reserved, { name, keyed });
      await expect(run.result({ timeout: '10s' })).rejects.toThrow(
        name === 'set-keys' ? /cannot be named "set-keys"/ : `cannot be named "${name}"`,
      );
      expect(countOf(run.runId, name)).toBe(0);
      expect(await keysOf(run.runId)).toEqual([]);
    }
    const plain = await app.client.start(Reserved, { name: 'sleep', keyed: false }); // its key, `sleep`, is no primitive's
    expect(await plain.result({ timeout: '10s' })).toBe('sleep');
    await expect(startApp({ schema, providers: [Napper] })).rejects.toThrow(
      'A step with a key option cannot be named "sleep": its checkpoint keys (sleep:<key>) are those of a primitive\'s.',
    );
  });

  it("every way a run is inserted gives it this version's key format: a child, a delayed, queued or debounced start, a schedule's", async () => {
    const parent = await app.client.start(Parent, null);
    await parent.result({ timeout: '10s' });
    const delayed = await app.client.start(Plain, null, { delay: '1h' });
    // Five at once: the first goes out alone, the four behind it as one batch of queued starts (group commit).
    const queued = await Promise.all([1, 2, 3, 4, 5].map(() => app.client.start(Plain, null, { queue: 'one' })));
    const debounced = await app.client.start(Plain, null, { debounce: { key: 'k', delay: '1h' } });
    await app.get(ScheduleService).create({ name: 'every-second', workflow: Plain, cron: '* * * * * *' });
    await eventually(async () => (await db.count('runs', `id LIKE 'schedule:every-second:%'`)) > 0, "the schedule's run");
    await app.get(ScheduleService).delete('every-second');
    const these = `id = ANY($1) OR parent_id = $2 OR id LIKE 'schedule:every-second:%'`;
    const params = [[parent.runId, delayed.runId, ...queued.map((q) => q.runId), debounced.runId], parent.runId];
    expect(await db.count('runs', these, params)).toBeGreaterThanOrEqual(10);
    expect(await db.query(`SELECT DISTINCT key_format FROM durable.runs WHERE ${these}`, params)).toEqual([{ key_format: KEY_FORMAT }]);
  });
});
