import { z } from 'zod';
import {
  defineSignal,
  DurableWorkflow,
  InvalidArgumentError,
  InvalidPayloadError,
  ScheduleService,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { Client } from 'pg';
import { databaseUrl, Db, DurableTestApp, eventually, fileApps, repeatableReadRole, startApp, uniqueSchema } from '../setup/durable-app';

const Approval = defineSignal('approval', z.object({ by: z.string() }));
const Close = defineSignal<null>('close');

/** Waits for an approval; learns its tracking number on the way (ctx.setKeys). */
@Workflow('bk-order', { signals: [Approval, Close] })
class Order implements DurableWorkflow<OrderInput, unknown> {
  async run(input: OrderInput, ctx: WorkflowContext) {
    if (input.tracking) await ctx.setKeys({ trackingNo: input.tracking });
    if (input.retracking) await ctx.setKeys({ trackingNo: input.retracking }); // replaces: a replay never undoes it
    const approval = await ctx.waitForSignal(Approval);
    if (input.hold) await ctx.waitForSignal(Close); // open until told, so late signalWithStart calls find it open
    return approval;
  }
}
interface OrderInput {
  tracking?: string;
  retracking?: string;
  hold?: boolean;
}

/** Another workflow that takes the same signal, with the same schema. */
@Workflow('bk-invoice', { signals: [Approval] })
class Invoice implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal(Approval);
  }
}

/** Approval whose check takes a while (an async refinement: a lookup elsewhere, say). */
const SlowApproval = defineSignal(
  'slow-approval',
  z.object({ by: z.string() }).refine(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return true;
  }),
);

@Workflow('bk-slow', { signals: [SlowApproval] })
class Slow implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal(SlowApproval);
  }
}

/** Fails at once; it takes approvals (a retry would read one). */
@Workflow('bk-fails', { signals: [Approval], retry: { maxAttempts: 1 } })
class Fails implements DurableWorkflow<null, unknown> {
  async run(): Promise<unknown> {
    throw new Error('declined');
  }
}

/** Tries to hold more than 16 keys. */
@Workflow('bk-greedy', { retry: { maxAttempts: 1 } })
class Greedy implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.setKeys(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, 'x'])));
    await ctx.setKeys(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`b${i}`, 'x'])));
    return 'unreachable';
  }
}

describe('business keys: find, signal and start runs by what they are about', () => {
  const schema = uniqueSchema('bk');
  const { db, boot } = fileApps({
    schema,
    providers: [Order, Invoice, Greedy, Fails],
    options: { dashboard: { auth: { insecureNoAuth: true } } },
    listen: true,
  });
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await boot();
  });
  const parked = (runId: string) => eventually(async () => (await app.client.getRun(runId)).status === 'waiting', `run ${runId} parked`);
  const ids = (runs: Array<{ runId: string }>) => runs.map((r) => r.runId).sort();

  it('lists runs by one key and by several; keys set inside a run are journaled and replace by name', async () => {
    const a = await app.client.start(Order, { tracking: 'T-1', retracking: 'T-2' }, { keys: { orderId: 'A-17', customer: 'c-9' } });
    const b = await app.client.start(Order, {}, { keys: { orderId: 'A-18', customer: 'c-9' } });
    await Promise.all([parked(a.runId), parked(b.runId)]);
    expect(ids((await app.client.listRuns({ keys: { customer: 'c-9' } })).runs)).toEqual(ids([a, b]));
    expect(ids((await app.client.listRuns({ keys: { customer: 'c-9', orderId: 'A-17' } })).runs)).toEqual([a.runId]);
    expect(ids((await app.client.listRuns({ keys: { customer: 'c-9' }, status: 'completed' })).runs)).toEqual([]);
    expect((await app.client.getRun(a.runId)).keys).toEqual({ orderId: 'A-17', customer: 'c-9', trackingNo: 'T-2' });
    expect(ids((await app.client.listRuns({ keys: { trackingNo: 'T-1' } })).runs)).toEqual([]);
    // A re-execution (the signal wakes it) replays both setKeys without writing: the later value stays.
    await app.signals.signal(a.runId, Approval, { by: 'ana' });
    await a.result({ timeout: '10s' });
    expect((await app.client.getRun(a.runId)).keys?.trackingNo).toBe('T-2');
    expect(await db.count('steps', `run_id = $1 AND kind = 'set-keys'`, [a.runId])).toBe(2);

    const greedy = await app.client.start(Greedy, null);
    await expect(greedy.result({ timeout: '10s' })).rejects.toThrow(/more than 16 keys/);
    expect(Object.keys((await app.client.getRun(greedy.runId)).keys ?? {})).toHaveLength(10);
  });

  it('signalByKeys: fan-out to all and to one, no match, redelivery a no-op per run, the workflow filter, closed runs left out', async () => {
    const runs = []; // started one after another: 'one' goes to the oldest
    for (let i = 0; i < 3; i++) runs.push(await app.client.start(Order, {}, { keys: { batch: 'b-1' } }));
    const invoice = await app.client.start(Invoice, null, { keys: { batch: 'b-1' } });
    await Promise.all([...runs, invoice].map((r) => parked(r.runId)));

    expect(await app.signals.signalByKeys({ batch: 'nope' }, Approval, { by: 'x' })).toEqual([]);
    const one = await app.signals.signalByKeys({ batch: 'b-1' }, Approval, { by: 'first' }, { fanOut: 'one' });
    expect(one).toEqual([{ runId: runs[0].runId, name: 'approval', accepted: true, deliveredAt: expect.any(Date) }]);
    expect(await runs[0].result({ timeout: '10s' })).toEqual({ by: 'first' });

    const orders = await app.signals.signalByKeys({ batch: 'b-1' }, Approval, { by: 'all' }, { workflow: Order });
    expect(ids(orders)).toEqual(ids(runs.slice(1))); // the completed run is left out, the invoice is another workflow
    expect(orders.every((d) => d.accepted)).toBe(true);
    const again = await app.signals.signalByKeys({ batch: 'b-1' }, Approval, { by: 'again' }, { workflow: Order });
    for (const run of runs.slice(1)) expect(await run.result({ timeout: '10s' })).toEqual({ by: 'all' });
    expect(again.every((d) => !d.accepted) || again.length === 0).toBe(true);

    const rest = await app.signals.signalByKeys({ batch: 'b-1' }, Approval, { by: 'rest' });
    expect(ids(rest)).toEqual([invoice.runId]);
    expect(await invoice.result({ timeout: '10s' })).toEqual({ by: 'rest' });
    expect(await db.count('signals', `payload LIKE '%again%'`)).toBe(0);
    expect(await db.count('history', `event = 'signal-delivered' AND detail->'byKeys' = '{"batch": "b-1"}'::jsonb`)).toBe(4);
  });

  it("fanOut 'one' takes a failed run last: an older failed run's successor (a fork, a new run) gets the signal", async () => {
    const failed = await app.client.start(Fails, null, { keys: { claim: 'c-1' } });
    await expect(failed.result({ timeout: '10s' })).rejects.toThrow('declined');
    const live = await app.client.start(Invoice, null, { keys: { claim: 'c-1' } });
    const [delivery] = await app.signals.signalByKeys({ claim: 'c-1' }, Approval, { by: 'one' }, { fanOut: 'one' });
    expect(delivery).toMatchObject({ runId: live.runId, accepted: true });
    expect(await live.result({ timeout: '10s' })).toEqual({ by: 'one' });
    // With no other match the failed run takes it: a retry reads it.
    const alone = await app.client.start(Fails, null, { keys: { claim: 'c-2' } });
    await expect(alone.result({ timeout: '10s' })).rejects.toThrow('declined');
    const [buffered] = await app.signals.signalByKeys({ claim: 'c-2' }, Approval, { by: 'one' }, { fanOut: 'one' });
    expect(buffered).toMatchObject({ runId: alone.runId, accepted: true });
  });

  it('bad keys and bad payloads: a clear error, nothing recorded', async () => {
    const before = await db.count('runs');
    const signalsBefore = await db.count('signals');
    const bad: Array<[unknown, RegExp]> = [
      [{ '1st': 'x' }, /key name "1st" must be a letter/],
      [{ orderId: 7 }, /value of key "orderId" must be a string/],
      [{ orderId: 'x'.repeat(201) }, /201 characters; at most 200/],
      [{ orderId: 'a\u0000b' }, /NUL/],
      [Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), /17 keys; a run has at most 16/],
      ['orderId=1', /must be an object/],
    ];
    for (const [keys, message] of bad) {
      await expect(app.client.start(Order, {}, { keys: keys as never })).rejects.toThrow(message);
      await expect(app.signals.signalByKeys(keys as never, Approval, { by: 'x' })).rejects.toThrow(InvalidArgumentError);
      await expect(app.client.listRuns({ keys: keys as never })).rejects.toThrow(message);
    }
    await expect(app.signals.signalByKeys({}, Approval, { by: 'x' })).rejects.toThrow(/at least one key/);
    await expect(app.signals.signalByKeys({ a: 'b' }, Approval, { by: 7 } as never)).rejects.toThrow(InvalidPayloadError);
    await expect(app.signals.signalByKeys({ a: 'b' }, Approval, { by: 'x' }, { fanOut: 'many' as never })).rejects.toThrow(/fanOut/);
    // An instance that registers no workflow taking it (a producer, or a misspelt name where every workflow declares its
    // signals) says so, where it answered [] as if no run had the keys.
    const producer = await startApp({ schema, providers: [Invoice], options: { worker: { enabled: false } } });
    try {
      await expect(producer.signals.signalByKeys({ batch: 'b-1' }, 'close', null)).rejects.toThrow(
        /signalByKeys: no workflow registered on this instance takes signal "close" \(registered: "bk-invoice"\)/,
      );
    } finally {
      await producer.close();
    }
    expect(await db.count('runs')).toBe(before);
    expect(await db.count('signals')).toBe(signalsBefore);
  });

  it("misspelt options of the client's calls are refused naming them, before anything is read or written", async () => {
    const open = await app.client.start(Order, { hold: true }, { runId: 'order-misspelt' });
    await parked(open.runId);
    const [runs, signals, history] = [await db.count('runs'), await db.count('signals'), await db.count('history')];
    const { client, signals: deliver } = app;
    const schedules = app.get(ScheduleService);
    // Each called in turn: one that is not refused must not race the others on the run.
    const refused: Array<[() => Promise<unknown>, string]> = [
      // Each would have gone on without what it names: a fan-out to every match, keys dropped, outside the caller's transaction.
      [
        () => deliver.signalByKeys({ orderId: 'A-1' }, Approval, { by: 'x' }, { fanout: 'one' } as never),
        'signalByKeys(): unknown option fanout; it takes workflow, fanOut, manager, actor.',
      ],
      [
        () => deliver.signalWithStart(Order, { runId: 'order-new', input: {}, key: { orderId: 'N-1' } } as never, Approval, { by: 'x' }),
        'signalWithStart() run: unknown option key; it takes runId, input, keys.',
      ],
      [
        () => deliver.signalWithStart(Order, { runId: 'order-new', input: {} }, Approval, { by: 'x' }, { manger: {} } as never),
        'signalWithStart(): unknown option manger; it takes manager, actor.',
      ],
      [() => deliver.signal(open.runId, Approval, { by: 'x' }, { manger: {} } as never), 'signal(): unknown option manger'],
      [() => deliver.send(open.runId, 'events', 'k-1', null, { actr: 'ops' } as never), 'send(): unknown option actr'],
      [() => open.result({ timout: '1s' } as never), 'result(): unknown option timout; it takes timeout.'],
      [() => client.cancel(open.runId, 'why', { actr: 'ops' } as never), 'cancel(): unknown option actr; it takes actor.'],
      [() => client.resume(open.runId, { by: 'ops' } as never), 'resume(): unknown option by'],
      [() => client.retry(open.runId, { actr: 'ops' } as never), 'retry(): unknown option actr'],
      [() => client.setDeadline(open.runId, null, { actr: 'ops' } as never), 'setDeadline(): unknown option actr'],
      [() => client.start(Order, {}, null as never), 'start() takes an options object; got null.'],
      [() => client.fork(open.runId, [] as never), 'fork() takes an options object; got an array.'],
      // A misspelt filter would list every workflow's runs.
      [() => client.listRuns({ workfow: 'bk-order' } as never), 'listRuns(): unknown option workfow; it takes status, workflow,'],
      // Checked before the schedule is looked up: none is named so here.
      [
        () => schedules.trigger('none', { overlap: 'allow', expectLast: 'r' } as never),
        'trigger("none"): unknown option expectLast; it takes overlap, expectLastRun, actor.',
      ],
      [() => schedules.pause('none', { actr: 'ops' } as never), 'pause("none"): unknown option actr'],
      [() => schedules.resume('none', { actr: 'ops' } as never), 'resume("none"): unknown option actr'],
      [() => schedules.backfill('none', new Date(0), new Date(0), { actr: 'ops' } as never), 'backfill("none"): unknown option actr'],
    ];
    for (const [call, message] of refused) {
      const refusal = call();
      await expect(refusal).rejects.toThrow(InvalidArgumentError);
      await expect(refusal).rejects.toThrow(message);
    }
    // Whatever its value: one set from configuration must fail where the setting is unset too.
    await expect(open.result({ timeout: '10ms', manger: undefined } as never)).rejects.toThrow('result(): unknown option manger');
    expect([await db.count('runs'), await db.count('signals'), await db.count('history')]).toEqual([runs, signals, history]);
    expect((await client.getRun(open.runId)).status).toBe('waiting');
    await client.cancel(open.runId);
  });

  it('signalWithStart under 50 concurrent callers on two instances: one run, one accepted delivery', async () => {
    const other = await boot();
    const calls = Array.from({ length: 50 }, (_, i) =>
      (i % 2 ? other : app).signals.signalWithStart(
        Order,
        { runId: 'order-Z-1', input: { hold: true }, keys: { orderId: 'Z-1' } },
        Approval,
        { by: `caller-${i}` },
      ),
    );
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.run.created)).toHaveLength(1);
    expect(results.filter((r) => r.delivery.accepted)).toHaveLength(1);
    const winner = results.find((r) => r.delivery.accepted)!;
    await app.signals.signal('order-Z-1', Close, null);
    expect(await winner.run.result({ timeout: '10s' })).toEqual({ by: expect.stringMatching(/^caller-/) });
    expect(await db.count('runs', `id = 'order-Z-1'`)).toBe(1);
    expect(await db.count('signals', `run_id = 'order-Z-1' AND name = 'approval'`)).toBe(1);
    expect((await app.client.getRun('order-Z-1')).keys).toEqual({ orderId: 'Z-1' });
  });

  it("signalWithStart validates the payload before its transaction opens: a check slower than the module's idle-in-transaction timeout does not end it", async () => {
    const slowSchema = uniqueSchema('bk');
    const slow = await startApp({ schema: slowSchema, providers: [Slow], options: { idleInTransactionTimeoutMs: 1_000 } });
    try {
      const { run, delivery } = await slow.signals.signalWithStart(Slow, { runId: 'slow-1', input: null }, SlowApproval, { by: 'ops' });
      expect([run.created, delivery.accepted]).toEqual([true, true]);
      expect(await run.result({ timeout: '10s' })).toEqual({ by: 'ops' });
    } finally {
      await slow.close();
      await new Db(slowSchema).dropSchema();
    }
  });

  it('REST: GET /runs?key.<name>=<value>, keys in the run; a bad key is a 400 naming it', async () => {
    const run = await app.client.start(Order, {}, { keys: { orderId: 'R-1', region: 'eu' } });
    await app.client.start(Order, {}, { keys: { orderId: 'R-2', region: 'eu' } });
    const get = async (query: string) => {
      const response = await fetch(`${app.url}/durable/api/runs?${query}`);
      return { status: response.status, body: (await response.json()) as any };
    };
    const found = await get('key.orderId=R-1&key.region=eu');
    expect(found.status).toBe(200);
    expect(found.body.runs.map((r: { runId: string }) => r.runId)).toEqual([run.runId]);
    expect(found.body.runs[0].keys).toEqual({ orderId: 'R-1', region: 'eu' });
    expect((await get('key.region=eu')).body.runs).toHaveLength(2);
    const empty = await app.client.start(Order, {}, { keys: { orderId: 'R-0', note: '' } });
    const byEmpty = await get('key.note='); // an empty value is a value: before, a 400 saying it was undefined
    expect([byEmpty.status, byEmpty.body.runs.map((r: { runId: string }) => r.runId)]).toEqual([200, [empty.runId]]);
    const bad = await get('key.9x=1');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/key name "9x"/);
    const proto = await get('key.__proto__=x'); // not silently dropped (which would list every run)
    expect(proto.status).toBe(400);
    expect(proto.body.message).toMatch(/key name "__proto__"/);
    const post = (body: unknown) =>
      fetch(`${app.url}/durable/api/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-durable-request': '1' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const started = await post({ workflow: 'bk-order', input: {}, keys: { orderId: 'R-3' } });
    expect(started.status).toBe(201);
    expect((await app.client.getRun(started.body.runId)).keys).toEqual({ orderId: 'R-3' });
    expect((await post({ workflow: 'bk-order', input: {}, keys: { orderId: 'x'.repeat(201) } })).status).toBe(400);
    // A key named __proto__ in the body is refused by name, not dropped (a run started without it).
    const runs = await db.count('runs');
    const protoKey = await post('{"workflow":"bk-order","input":{},"keys":{"__proto__":"A-1"}}');
    expect([protoKey.status, protoKey.body.message]).toEqual([400, expect.stringMatching(/key name "__proto__"/)]);
    expect(await db.count('runs')).toBe(runs);
  });
});

describe('signalWithStart on a database whose default isolation is repeatable read', () => {
  const schema = uniqueSchema('bkrr');
  const db = new Db(schema);
  const starting = new Client(databaseUrl());
  let app: DurableTestApp;
  let role: Awaited<ReturnType<typeof repeatableReadRole>>;

  beforeAll(async () => {
    role = await repeatableReadRole(`${schema}_rr`);
    app = await startApp({ schema, providers: [Order], options: { connection: role.url } });
    await starting.connect();
  });
  afterAll(async () => {
    await app.close();
    await starting.end();
    await db.dropSchema();
    await role.drop();
  });

  it('waits for a concurrent start of the id and delivers to its run (one run, one delivery), not a serialization failure', async () => {
    // Another start of the id in flight: its insert not committed yet.
    await starting.query('BEGIN');
    await starting.query(
      `INSERT INTO "${schema}".runs (id, workflow, status, input, wake_at) VALUES ('order-RR', 'bk-order', 'pending', '{}', now())`,
    );
    const call = app.signals.signalWithStart(Order, { runId: 'order-RR', input: {} }, Approval, { by: 'ops' });
    await eventually(
      async () =>
        (await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%"${schema}"%`])).length > 0,
      "the start waiting on the other's insert",
    );
    await starting.query('COMMIT');
    const { run, delivery } = await call;
    expect(run.created).toBe(false);
    expect(delivery.accepted).toBe(true);
    expect(await run.result({ timeout: '10s' })).toEqual({ by: 'ops' });
    expect(await db.count('runs', `id = 'order-RR'`)).toBe(1);
  });
});
