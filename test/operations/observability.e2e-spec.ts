import { context, propagation, SpanStatusCode, TextMapPropagator, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Client } from 'pg';
import { Registry } from 'prom-client';
import {
  DurableHealth,
  DurableWorkflow,
  NonRetryableError,
  ScheduledInput,
  ScheduleService,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';
import { DurableHealthIndicator } from 'nestjs-durable/health';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Workflow('observed', { retry: { maxAttempts: 1 } })
class Observed implements DurableWorkflow<{ fail?: boolean }, string> {
  async run(input: { fail?: boolean }, ctx: WorkflowContext) {
    await ctx.step('prepare', () => 'ready');
    if (input.fail) throw new Error('observed failure');
    const go = await ctx.waitForSignal<string>('go');
    await ctx.step('finish', () => go);
    return go;
  }
}

/** Parks on an `observed` child: a cancel of it cascades to the child. */
@Workflow('observed-parent')
class ObservedParent implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(Observed, {}, { step: 'child' });
    return child.result();
  }
}

@Workflow('napper')
class Napper implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.sleep('nap', 400);
    return 'rested';
  }
}

/** Repeated names (`charge#2`), keyed steps (`item:<key>`) and a consumed channel (`consume:<channel>:<key>`). */
@Workflow('metered', { retry: { maxAttempts: 1 } })
class Metered implements DurableWorkflow<string[], number> {
  async run(items: string[], ctx: WorkflowContext) {
    for (const item of items) {
      await ctx.step('charge', () => item);
      await ctx.step('item', () => item, { key: () => item });
    }
    const last = await ctx.consume<number>('events', () => undefined, { until: (message) => message.payload === items.length });
    return last.payload;
  }
}

/** A schedule whose slots are a year apart: its runs here are an operator's triggers. */
@Workflow('yearly', { schedules: [{ name: 'yearly', cron: '0 3 1 1 *' }] })
class Yearly implements DurableWorkflow<ScheduledInput, string> {
  async run(_: ScheduledInput, ctx: WorkflowContext) {
    return ctx.step('tally', () => 'tallied');
  }
}

/** A step that throws what String() cannot print (a null prototype): the run must fail with it, not with a TypeError. */
@Workflow('odd-thrower', { retry: { maxAttempts: 1 } })
class OddThrower implements DurableWorkflow<null, never> {
  async run(_: null, ctx: WorkflowContext): Promise<never> {
    return ctx.step('throw', () => {
      throw Object.assign(Object.create(null), { code: 'E_ODD' });
    });
  }
}

/** A step whose error's message and stack are longer than a stored error keeps. */
@Workflow('long-thrower', { retry: { maxAttempts: 1 } })
class LongThrower implements DurableWorkflow<null, never> {
  async run(_: null, ctx: WorkflowContext): Promise<never> {
    return ctx.step('throw', () => {
      const error = new NonRetryableError('x'.repeat(10_000));
      error.stack = `NonRetryableError: …\n${'    at somewhere\n'.repeat(1_000)}`;
      throw error;
    });
  }
}

/** The runs holding their step, each until the test opens its gate. */
const gates = new Map<string, () => void>();
const hold = (ctx: WorkflowContext) => ctx.step('hold', () => new Promise<string>((open) => gates.set(ctx.runId, () => open('released'))));

/** Holds its step until the test opens its gate: an execution to cancel or take over mid-step. */
@Workflow('held', { retry: { maxAttempts: 1 } })
class Held implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return hold(ctx);
  }
}

@Workflow('queued-one', { queue: 'one' })
class QueuedOne implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    return hold(ctx);
  }
}

/** Another propagator than W3C's (as B3 or Jaeger's): a run stores whatever the registered one writes. */
const headerPropagator: TextMapPropagator = {
  inject: (ctx, carrier, setter) => {
    const span = trace.getSpanContext(ctx);
    if (span) setter.set(carrier, 'x-trace', `${span.traceId}-${span.spanId}`);
  },
  extract: (ctx, carrier, getter) => {
    const header = getter.get(carrier, 'x-trace');
    if (typeof header !== 'string') return ctx;
    const [traceId, spanId] = header.split('-');
    return trace.setSpanContext(ctx, { traceId, spanId, traceFlags: 1, isRemote: true });
  },
  fields: () => ['x-trace'],
};

const exporter = new InMemorySpanExporter();

describe('observability: spans, metrics and health', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  const registry = new Registry();
  let t: DurableTestApp;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    t = await startApp({
      schema,
      providers: [Observed, ObservedParent, Napper, Metered, Yearly, OddThrower, LongThrower, Held, QueuedOne],
      imports: [TerminusModule],
      options: { metrics: { registry }, inlineWaitMs: 100, queues: { one: { concurrency: 1 } } },
    });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const spans = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
  /** The sum of a metric's values with these labels; `name_count` reads a histogram's count. */
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const base = name.replace(/_count$/, '');
    const metric = await registry.getSingleMetric(base)!.get();
    return (metric.values as Array<{ value: number; labels: Record<string, unknown>; metricName?: string }>)
      .filter((v) => (name === base ? v.metricName === undefined || v.metricName === base : v.metricName === name))
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
  };
  const attribute = (span: ReadableSpan, key: string) => span.attributes[key];
  /** Starts an `observed` run inside a request's span: the run's id and the request's trace. */
  const startInRequest = () =>
    trace.getTracer('test').startActiveSpan('POST /orders', async (request) => {
      const handle = await t.client.start(Observed, {});
      request.end();
      return { runId: handle.runId, traceId: request.spanContext().traceId };
    });
  /** An `observed` run's two executions' spans (parked, then signalled on), once both ended. */
  const bothExecutions = (runId: string) =>
    eventually(async () => {
      const found = spans('durable.execution observed').filter((s) => attribute(s, 'durable.run_id') === runId);
      return found.length === 2 && found;
    }, "both executions' spans to end");
  /** Signals a parked `observed` run on and awaits its result. */
  const signalOn = async (runId: string) => {
    await eventually(async () => (await t.client.getRun(runId)).status === 'waiting', 'the run to park');
    await t.signals.signal(runId, 'go', 'now');
    expect(await t.client.handle(runId).result({ timeout: '5s' })).toBe('now');
  };

  it("the run's executions, steps, waits and signal deliveries are spans in the trace of the request that started it", async () => {
    const { runId, traceId } = await startInRequest();
    await signalOn(runId);
    // The execution's span ends just after the run's end reached result(): wait for it.
    const executions = await bothExecutions(runId);
    expect(executions.map((s) => attribute(s, 'durable.outcome'))).toEqual(['park', 'completed']);
    for (const execution of executions) expect(execution.spanContext().traceId).toBe(traceId); // joined across the park
    const steps = exporter.getFinishedSpans().filter((s) => s.name.startsWith('durable.step') && attribute(s, 'durable.run_id') === runId);
    expect(steps.map((s) => s.name)).toEqual(['durable.step prepare', 'durable.step finish']);
    expect(steps[1].parentSpanContext?.spanId).toBe(executions[1].spanContext().spanId);
    expect(attribute(steps[0], 'durable.attempt')).toBe(1);
    const wait = spans('durable.wait signal').find((s) => attribute(s, 'durable.run_id') === runId)!;
    expect(attribute(wait, 'durable.wait.name')).toBe('go');
    const delivery = spans('durable.signal go').find((s) => attribute(s, 'durable.run_id') === runId)!;
    expect(attribute(delivery, 'durable.accepted')).toBe(true);
  });

  it("a schedule's run triggered inside a request span is executed in that request's trace", async () => {
    const tracer = trace.getTracer('test');
    const { runId, traceId } = await tracer.startActiveSpan('POST /schedules/yearly/trigger', async (request) => {
      const handle = await t.get(ScheduleService).trigger('yearly');
      request.end();
      expect(handle.created).toBe(true);
      return { runId: handle.runId, traceId: request.spanContext().traceId };
    });
    expect(await t.client.handle(runId).result({ timeout: '5s' })).toBe('tallied');
    const execution = await eventually(
      async () => spans('durable.execution yearly').find((s) => attribute(s, 'durable.run_id') === runId),
      "the execution's span",
    );
    expect(execution.spanContext().traceId).toBe(traceId);
  });

  it("runs_started_total counts a schedule's runs (its slots, a trigger, a backfill) and forks", async () => {
    const schedules = t.get(ScheduleService);
    const started = () => value('durable_runs_started_total', { workflow: 'yearly' });
    const before = await started();
    const triggered = await schedules.trigger('yearly', { overlap: 'allow' });
    expect(await started()).toBe(before + 1);
    await triggered.result({ timeout: '5s' });
    await t.client.fork(triggered.runId, { fromStep: 'tally' });
    expect(await started()).toBe(before + 2);
    await expect(t.client.fork(triggered.runId, { fromStep: 'nowhere' })).rejects.toThrow(/nowhere/);
    expect(await started()).toBe(before + 2); // a refused fork started nothing
    const forksCounted = before + 2;
    // The first days of 2020, 2021 and 2022 at 03:00 UTC.
    await schedules.backfill('yearly', new Date('2020-01-01T00:00:00Z'), new Date('2022-01-02T00:00:00Z'));
    expect(await started()).toBe(forksCounted + 3);
    await schedules.create({ name: 'yearly-every-second', workflow: Yearly, cron: '* * * * * *', overlap: 'allow' });
    try {
      await eventually(async () => (await started()) > forksCounted + 3, 'a slot of the per-second schedule');
    } finally {
      await schedules.delete('yearly-every-second');
    }
  });

  it("a run claimed by a signal delivered inside a request span joins its own stored trace, or none: never the delivering request's", async () => {
    const tracer = trace.getTracer('test');
    const traced = await startInRequest();
    const untraced = (await t.client.start(Observed, {})).runId; // started outside any span: no stored trace
    for (const runId of [traced.runId, untraced])
      await eventually(async () => (await t.client.getRun(runId)).status === 'waiting', 'the run to park');

    for (const runId of [traced.runId, untraced]) {
      const requestTrace = await tracer.startActiveSpan('POST /signals', async (request) => {
        await t.signals.signal(runId, 'go', 'now'); // claims the parked run and executes it here
        request.end();
        return request.spanContext().traceId;
      });
      expect(await t.client.handle(runId).result({ timeout: '5s' })).toBe('now');
      const [, second] = await bothExecutions(runId);
      expect(second.spanContext().traceId).not.toBe(requestTrace);
      if (runId === traced.runId) expect(second.spanContext().traceId).toBe(traced.traceId);
      else expect(second.parentSpanContext).toBeUndefined();
    }
  });

  it('metrics count runs by outcome, time steps and claims, and gauge the waiting runs', async () => {
    const waiting = await t.client.start(Observed, {});
    await t.client.start(Observed, { fail: true }).then((h) => h.result().catch(() => undefined));
    await (await t.client.start(Napper, null)).result({ timeout: '5s' });
    await eventually(async () => (await t.client.getRun(waiting.runId)).status === 'waiting', 'a run to wait');

    expect(await value('durable_runs_started_total', { workflow: 'observed' })).toBeGreaterThanOrEqual(3);
    expect(await value('durable_runs_ended_total', { workflow: 'observed', status: 'failed' })).toBe(1);
    expect(await value('durable_runs_ended_total', { workflow: 'napper', status: 'completed' })).toBe(1);
    expect(await value('durable_step_duration_seconds_count', { workflow: 'observed', step: 'prepare' })).toBeGreaterThanOrEqual(3);
    expect(await value('durable_claim_latency_seconds_count')).toBeGreaterThanOrEqual(1); // the nap parked and was claimed back
    expect(await value('durable_runs_waiting', { reason: 'signal' })).toBeGreaterThanOrEqual(1);
    expect(await value('durable_wakes_overdue')).toBe(0);
    // A queue's backlog is pending (its reason worked out when read): it counts as waiting for the queue.
    // A queue no instance declares, so that nothing admits it.
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, queue) VALUES ('backlog-1', 'observed', 'pending', '{}', 'undeclared')`,
    );
    try {
      // The gauges' figures are reused for 500 ms: the scrape after that counts it.
      await eventually(async () => (await value('durable_runs_waiting', { reason: 'queue' })) === 1, 'the backlog in the gauge');
    } finally {
      await db.query(`DELETE FROM durable.runs WHERE id = 'backlog-1'`);
    }
    expect(await registry.metrics()).toContain('durable_claim_pass_duration_seconds_bucket');
  });

  it("runs_ended_total counts as failed, once each, runs whose deadline passed before they began: the sweeper's, and one that held a debounce key, failed by the next start", async () => {
    const failed = () => value('durable_runs_ended_total', { workflow: 'napper', status: 'failed' });
    const before = await failed();
    const doomed = await t.client.start(Napper, null, { debounce: { key: 'doomed', delay: '1h' } });
    await t.client.setDeadline(doomed.runId, new Date(Date.now() - 1_000));
    const next = await t.client.start(Napper, null, { debounce: { key: 'doomed', delay: '1h' } });
    expect(next.runId).not.toBe(doomed.runId);
    // Failed by that start (or by a sweep just before it): counted once either way.
    expect((await t.client.getRun(doomed.runId)).status).toBe('failed');
    // Awaited: a sweep's count follows its statement's answer, which a reader of the run may see first.
    const counted = (n: number) => eventually(async () => (await failed()) === before + n, `${n} counted`);
    await counted(1);
    await t.client.cancel(next.runId);

    const late = await t.client.start(Napper, null, { delay: '1h' });
    await t.client.setDeadline(late.runId, new Date(Date.now() - 1_000));
    await expect(late.result({ timeout: '10s' })).rejects.toMatchObject({ error: { name: 'DeadlineExceededError' } }); // the sweeper's
    await counted(2); // not 3: neither counted twice
  });

  it("runs_ended_total counts a cancel's runs as cancelled, its cascade and a schedule's cancelOther among them; a failed run cancelled is not counted again", async () => {
    const ended = (workflow: string, status: string) => value('durable_runs_ended_total', { workflow, status });
    const [parents, children, failed, held] = await Promise.all([
      ended('observed-parent', 'cancelled'),
      ended('observed', 'cancelled'),
      ended('observed', 'failed'),
      ended('held', 'cancelled'),
    ]);

    const parent = await t.client.start(ObservedParent, null);
    await eventually(async () => (await t.client.getRun(parent.runId)).status === 'waiting', 'the parent to park on its child');
    await t.client.cancel(parent.runId);
    expect(await ended('observed-parent', 'cancelled')).toBe(parents + 1);
    expect(await ended('observed', 'cancelled')).toBe(children + 1); // the child, cancelled by the cascade

    const failing = await t.client.start(Observed, { fail: true });
    await expect(failing.result({ timeout: '5s' })).rejects.toThrow('observed failure');
    expect(await ended('observed', 'failed')).toBe(failed + 1);
    await t.client.cancel(failing.runId); // its end was counted when it failed
    expect(await ended('observed', 'cancelled')).toBe(children + 1);

    const schedules = t.get(ScheduleService);
    await schedules.create({ name: 'held-yearly', workflow: Held, cron: '0 3 1 1 *', overlap: 'cancelOther' });
    try {
      const first = await schedules.trigger('held-yearly');
      await eventually(async () => gates.has(first.runId), 'the first run to hold its step');
      const second = await schedules.trigger('held-yearly'); // cancels the first
      expect((await t.client.getRun(first.runId)).status).toBe('cancelled');
      expect(await ended('held', 'cancelled')).toBe(held + 1);

      // The run fails while the next trigger's cancel waits for its row: it is judged as it ended, not as it was
      // in the snapshot the cancel's statement would have taken before the wait, and its end is not counted twice.
      await eventually(async () => gates.has(second.runId), 'the second run to hold its step');
      const locker = new Client(databaseUrl());
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`UPDATE "${schema}".runs SET status = 'failed', lease_owner = NULL, finished_at = now() WHERE id = $1`, [
          second.runId,
        ]);
        const third = schedules.trigger('held-yearly');
        await eventually(
          async () =>
            (await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).length > 0,
          "the trigger's cancel to wait for the run's row",
        );
        await locker.query('COMMIT');
        const { runId } = await third;
        expect((await t.client.getRun(second.runId)).status).toBe('cancelled');
        expect(await ended('held', 'cancelled')).toBe(held + 1);
        await t.client.cancel(runId);
        expect(await ended('held', 'cancelled')).toBe(held + 2);
        for (const id of [first.runId, second.runId, runId]) gates.get(id)?.();
      } finally {
        await locker.end();
      }
    } finally {
      await schedules.delete('held-yearly');
    }

    // The schedule pass: each slot of a per-second schedule cancels the run of the slot before.
    const slots = () => db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE id LIKE 'schedule:held-every-second:%'`);
    await schedules.create({ name: 'held-every-second', workflow: Held, cron: '* * * * * *', overlap: 'cancelOther' });
    try {
      await eventually(async () => (await ended('held', 'cancelled')) > held + 2, 'a slot to cancel the run of the slot before');
    } finally {
      await schedules.delete('held-every-second');
    }
    const left = (await slots()).map((r) => r.id);
    for (const runId of left) await t.client.cancel(runId).catch(() => undefined); // the last slot's run holds its step
    expect(await ended('held', 'cancelled')).toBe(held + 2 + left.length);
    for (const runId of left) gates.get(runId)?.();
  });

  it('a scrape while the database cannot answer still has the counters; the gauges it reads from the database say they are unknown, until it answers again', async () => {
    const scrape = () => registry.metrics().catch((error: Error) => `failed: ${error.message}`);
    await db.query(`ALTER TABLE durable.runs RENAME TO runs_away`); // the gauges' query fails as against a database gone
    try {
      const text = await eventually(async () => {
        const got = await scrape();
        return /^durable_wakes_overdue nan$/im.test(got) && got; // prom-client writes NaN as Nan
      }, 'a scrape with the gauges unknown');
      expect(text).toContain('durable_runs_started_total{workflow="observed"}');
      expect(text).not.toMatch(/^durable_runs_waiting\{/m);
    } finally {
      await db.query(`ALTER TABLE durable.runs_away RENAME TO runs`);
    }
    await eventually(async () => /^durable_wakes_overdue 0$/m.test(await scrape()), 'the gauges back once the database answers');
  });

  it('the step histogram has one series per step name and outcome, whatever the repeats, keys and messages', async () => {
    const items = ['a', 'b', 'c', 'd'];
    const handle = await t.client.start(Metered, items);
    for (let i = 1; i <= items.length; i++) await t.signals.send(handle.runId, 'events', `m${i}`, i);
    expect(await handle.result({ timeout: '10s' })).toBe(items.length);
    const { values } = await registry.getSingleMetric('durable_step_duration_seconds')!.get();
    const series = (values as Array<{ value: number; labels: Record<string, unknown>; metricName?: string }>).filter(
      (v) => v.metricName === 'durable_step_duration_seconds_count' && v.labels.workflow === 'metered',
    );
    expect(series.map((v) => [v.labels.step, v.value]).sort()).toEqual([
      ['charge', 4],
      ['consume:events', 4],
      ['item', 4],
    ]);
  });

  it('health is up; killing the LISTEN connection takes it down until the listener reconnects', async () => {
    const health = t.get(DurableHealth);
    const indicator = await Test.createTestingModule({
      imports: [TerminusModule],
      providers: [DurableHealthIndicator, { provide: DurableHealth, useValue: health }],
    })
      .compile()
      .then((m) => m.get(DurableHealthIndicator));
    await eventually(async () => (await health.check()).healthy, 'the sweeper to tick');
    expect(await indicator.isHealthy()).toMatchObject({
      durable: { status: 'up', database: { up: true }, migrations: { up: true, pending: [] }, listener: { up: true } },
    });

    await db.query(
      // This file's own listeners only: files running side by side keep theirs.
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
      [`nestjs-durable:listen:${schema}`],
    );
    await eventually(async () => (await indicator.isHealthy()).durable.status === 'down', 'health to go down');
    expect((await health.check()).listener).toEqual({ up: false });
    await eventually(async () => (await indicator.isHealthy()).durable.status === 'up', 'health to come back', 15_000);
    const reconnects = await registry.getSingleMetric('durable_listen_reconnects_total')!.get();
    expect(reconnects.values[0].value).toBeGreaterThanOrEqual(1);
  });

  it('health: a sweeper whose claim pass waits on a lock is down (not the time it was asked); a database probe that hangs is down within 2 s', async () => {
    const health = t.get(DurableHealth);
    await eventually(async () => (await health.check()).healthy, 'health to be up');
    const locker = new Client(databaseUrl());
    await locker.connect();
    try {
      // Every claim waits on this lock (a migration, a stuck session): the sweeper is called, and achieves nothing.
      await locker.query(`BEGIN; LOCK TABLE "${schema}".runs IN ACCESS EXCLUSIVE MODE`);
      await eventually(async () => (await health.check()).sweeper.up === false, 'the sweeper to read as down');
      expect(await health.check()).toMatchObject({ healthy: false, database: { up: true }, listener: { up: true } });
      await locker.query('ROLLBACK');
      await eventually(async () => (await health.check()).healthy, 'health to come back once the claims go through');

      // A probe that does not answer (its table locked; a dropped connection alike) is down after its wait, not hung;
      // checks at once share its one query, so a hung database holds one connection, not one per probe.
      await locker.query(`BEGIN; LOCK TABLE "${schema}".migrations IN ACCESS EXCLUSIVE MODE`);
      const asked = Date.now();
      await eventually(async () => (await health.check()).database.up === false, 'the database probe to read as down');
      expect(Date.now() - asked).toBeLessThan(10_000); // the statement timeout is 30 s
      const reports = await Promise.all([health.check(), health.check(), health.check()]);
      for (const report of reports)
        expect(report).toMatchObject({ healthy: false, database: { up: false, error: 'no answer within 2000 ms' } });
      const [{ n }] = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`SELECT name FROM "${schema}".migrations%`],
      );
      expect(Number(n)).toBe(1);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    await eventually(async () => (await health.check()).healthy, 'health to be up again');
  });

  it('without a tracer provider no spans are made; a provider registered while the app runs is used from then on', async () => {
    const failedRun = async () => {
      const handle = await t.client.start(Observed, { fail: true });
      await expect(handle.result({ timeout: '5s' })).rejects.toThrow('observed failure');
      return handle.runId;
    };
    const ofRun = (runId: string) => exporter.getFinishedSpans().filter((s) => attribute(s, 'durable.run_id') === runId);
    trace.disable();
    const untraced = await failedRun();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const traced = await failedRun();
    const [execution] = await eventually(async () => {
      const found = spans('durable.execution observed').filter((s) => attribute(s, 'durable.run_id') === traced);
      return found.length === 1 && found;
    }, "the traced run's execution span to end");
    expect(attribute(execution, 'durable.outcome')).toBe('failed');
    expect(ofRun(traced).map((s) => s.name)).toContain('durable.step prepare');
    expect(ofRun(untraced)).toEqual([]);
  });

  it("a scrape while the database hangs answers within the gauges' wait with the counters; the gauges' query still unanswered is not sent again", async () => {
    const holder = new Db(schema); // an open transaction's lock on the runs table: the gauges' query waits, as on a hung database
    const gaugeQueries = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%wait_kind, count(*)%' AND query LIKE $1`,
          [`%"${schema}"%`],
        )
      )[0].n;
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE durable.runs IN ACCESS EXCLUSIVE MODE');
      // Answered while the lock is still held (the statement timeout is a minute away), once the figures
      // cached from the last scrape are older than half a second.
      const text = await eventually(async () => {
        const got = await registry.metrics();
        return /^durable_wakes_overdue nan$/im.test(got) && got;
      }, 'a scrape with the gauges unknown');
      expect(text).toContain('durable_runs_started_total{workflow="observed"}');
      expect(await gaugeQueries()).toBe(1);
      await registry.metrics(); // more than the cache's half second after the first: a new query, were the first answered
      expect(await gaugeQueries()).toBe(1);
    } finally {
      await holder.query('COMMIT');
      await holder.close();
    }
    await eventually(async () => /^durable_wakes_overdue 0$/m.test(await registry.metrics()), 'the gauges back once the database answers');
  });

  it('a module closed and made again in one process registers its metrics anew; a second module on the same registry is refused, naming the options to set', async () => {
    const shared = new Registry();
    const other = uniqueSchema();
    const open = () => startApp({ schema: other, providers: [Napper], options: { metrics: { registry: shared } } });
    const first = await open();
    try {
      await expect(open()).rejects.toThrow(/durable_runs_started_total already registered.*`metrics\.registry` or `metrics\.prefix`/);
    } finally {
      await first.close();
    }
    expect(shared.getMetricsAsArray()).toEqual([]);
    const again = await open();
    try {
      expect(await (await again.client.start(Napper, null)).result({ timeout: '5s' })).toBe('rested');
      const ended = await shared.getSingleMetric('durable_runs_ended_total')!.get();
      expect(ended.values.map((v) => v.value)).toEqual([1]);
    } finally {
      await again.close();
      await new Db(other).dropSchema();
    }
  });

  it('a step that throws what String() cannot print fails its run with that error when spans are recorded, and its span says so', async () => {
    const handle = await t.client.start(OddThrower, null);
    await expect(handle.result({ timeout: '5s' })).rejects.toBeDefined();
    const run = await t.client.getRun(handle.runId);
    expect(run.error?.message).toBe('{"code":"E_ODD"}');
    const step = await eventually(
      async () => spans('durable.step throw').find((s) => attribute(s, 'durable.run_id') === handle.runId),
      "the step's span",
    );
    expect(step.status).toEqual({ code: SpanStatusCode.ERROR, message: '{"code":"E_ODD"}' });
  });

  it("a step's error is recorded on its span with its message and stack capped as a stored error's, and its code", async () => {
    const handle = await t.client.start(LongThrower, null);
    await expect(handle.result({ timeout: '5s' })).rejects.toBeDefined();
    const step = await eventually(
      async () => spans('durable.step throw').find((s) => attribute(s, 'durable.run_id') === handle.runId),
      "the step's span",
    );
    const exception = step.events.find((e) => e.name === 'exception')!.attributes!;
    expect(exception['exception.message']).toBe(`${'x'.repeat(8_000)}… (2000 more characters)`);
    expect(String(exception['exception.stacktrace']).length).toBeLessThan(4_100);
    expect(exception['exception.type']).toBe('NON_RETRYABLE');
    expect(step.status.message).toBe(exception['exception.message']);
  });

  it('a run whose stored trace context cannot be read executes in a trace of its own', async () => {
    const { runId } = await startInRequest();
    await db.query(`UPDATE durable.runs SET trace_context = '{not json' WHERE id = $1`, [runId]);
    await signalOn(runId);
    const [, second] = await bothExecutions(runId);
    expect(second.parentSpanContext).toBeUndefined();
  });

  it("a run started under another propagator than W3C's (B3, Jaeger) stores that propagator's context and joins its trace", async () => {
    propagation.disable();
    propagation.setGlobalPropagator(headerPropagator);
    try {
      const { runId, traceId } = await startInRequest();
      const [row] = await db.query<{ trace_context: string }>(`SELECT trace_context FROM durable.runs WHERE id = $1`, [runId]);
      expect(Object.keys(JSON.parse(row.trace_context))).toEqual(['x-trace']);
      await signalOn(runId);
      for (const execution of await bothExecutions(runId)) expect(execution.spanContext().traceId).toBe(traceId);
    } finally {
      propagation.disable();
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
  });

  it("a fork and a backfill made inside a request span execute in that request's trace", async () => {
    const source = await t.get(ScheduleService).trigger('yearly', { overlap: 'allow' });
    await source.result({ timeout: '5s' });
    const { forkId, traceId } = await trace.getTracer('test').startActiveSpan('POST /runs/fork', async (request) => {
      const fork = await t.client.fork(source.runId, { fromStep: 'tally' });
      // The first day of 2019 at 03:00 UTC: one slot.
      await t.get(ScheduleService).backfill('yearly', new Date('2019-01-01T00:00:00Z'), new Date('2019-01-02T00:00:00Z'));
      request.end();
      return { forkId: fork.runId, traceId: request.spanContext().traceId };
    });
    const backfilled = 'schedule:yearly:2019-01-01T03:00:00.000Z';
    for (const runId of [forkId, backfilled]) {
      expect(await t.client.handle(runId).result({ timeout: '5s' })).toBe('tallied');
      const execution = await eventually(
        async () => spans('durable.execution yearly').find((s) => attribute(s, 'durable.run_id') === runId),
        `the execution span of ${runId}`,
      );
      expect(execution.spanContext().traceId).toBe(traceId);
    }
  });

  it('a wait whose park statement fails ends its span with the error; the run parks once the statement can succeed', async () => {
    await db.query(`ALTER TABLE durable.runs ADD CONSTRAINT park_refused CHECK (status <> 'waiting' OR workflow <> 'napper') NOT VALID`);
    let runId: string;
    try {
      runId = (await t.client.start(Napper, null)).runId;
      const wait = await eventually(
        async () => spans('durable.wait sleep').find((s) => attribute(s, 'durable.run_id') === runId),
        "the failed park's wait span to end",
      );
      expect(wait.status.code).toBe(SpanStatusCode.ERROR);
      expect(wait.events.map((e) => e.name)).toContain('exception');
    } finally {
      await db.query(`ALTER TABLE durable.runs DROP CONSTRAINT park_refused`);
    }
    expect(await t.client.handle(runId).result({ timeout: '20s' })).toBe('rested'); // taken back once its lease lapses
  }, 30_000);

  it('a cancel, here or on another instance, is not a lease loss; a takeover is', async () => {
    const losses = () => value('durable_lease_losses_total');
    const before = await losses();
    const outcome = (runId: string) =>
      eventually(
        async () => spans('durable.execution held').find((s) => attribute(s, 'durable.run_id') === runId),
        `the execution span of ${runId}`,
      ).then((span) => attribute(span, 'durable.outcome'));
    const holding = async () => {
      const { runId } = await t.client.start(Held, null);
      await eventually(async () => gates.has(runId), 'the step to begin');
      return runId;
    };

    const here = await holding();
    await t.client.cancel(here);
    expect(await outcome(here)).toBe('cancelled');

    const elsewhere = await holding();
    const other = await startApp({ schema, providers: [Held], options: { worker: { enabled: false } } });
    try {
      await other.client.cancel(elsewhere); // told here on the control channel; the renewal it makes finds the run cancelled
      expect(await outcome(elsewhere)).toBe('cancelled');
    } finally {
      await other.close();
    }
    expect(await losses()).toBe(before);

    const taken = await holding();
    await db.query(`UPDATE durable.runs SET lease_token = lease_token + 1, lease_owner = 'another-instance' WHERE id = $1`, [taken]);
    expect(await outcome(taken)).toBe('lease-lost'); // found by the next renewal (a third of the lease)
    expect(await losses()).toBe(before + 1);
    await t.client.cancel(taken); // else claimed again once the bumped lease lapses

    // Taken over, then cancelled by an operator before this instance's renewal looked: still a takeover.
    const takenThenCancelled = await holding();
    await db.query(
      `UPDATE durable.runs SET lease_token = lease_token + 2, lease_owner = NULL, status = 'cancelled', finished_at = now() WHERE id = $1`,
      [takenThenCancelled],
    );
    expect(await outcome(takenThenCancelled)).toBe('lease-lost');
    expect(await losses()).toBe(before + 2);
    for (const runId of [here, elsewhere, taken, takenThenCancelled]) gates.get(runId)!();
  }, 30_000);

  it("a run admitted from a queue's backlog is timed as its wait there, by queue, not as a claim's lateness", async () => {
    const claims = await value('durable_claim_latency_seconds_count');
    const first = await t.client.start(QueuedOne, null); // takes the queue's one slot and executes at once
    await eventually(async () => gates.has(first.runId), 'the first run to hold its slot');
    const second = await t.client.start(QueuedOne, null); // waits in the backlog
    expect((await t.client.getRun(second.runId)).status).toBe('pending');
    gates.get(first.runId)!();
    await eventually(async () => gates.has(second.runId), 'the second run to be admitted');
    gates.get(second.runId)!();
    expect(await second.result({ timeout: '5s' })).toBe('released');
    expect(await value('durable_queue_wait_seconds_count', { queue: 'one' })).toBe(1);
    expect(await value('durable_claim_latency_seconds_count')).toBe(claims);
  });
});
