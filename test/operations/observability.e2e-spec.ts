import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { DurableHealth, DurableWorkflow, ScheduledInput, ScheduleService, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableHealthIndicator } from 'nestjs-durable/health';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

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
      providers: [Observed, Napper, Metered, Yearly],
      imports: [TerminusModule],
      options: { metrics: { registry }, inlineWaitMs: 100 },
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

  it("the run's executions, steps, waits and signal deliveries are spans in the trace of the request that started it", async () => {
    const tracer = trace.getTracer('test');
    const { runId, traceId } = await tracer.startActiveSpan('POST /orders', async (request) => {
      const handle = await t.client.start(Observed, {});
      request.end();
      return { runId: handle.runId, traceId: request.spanContext().traceId };
    });
    await eventually(async () => (await t.client.getRun(runId)).status === 'waiting', 'the run to park');
    await t.signals.signal(runId, 'go', 'now');
    expect(await t.client.handle(runId).result({ timeout: '5s' })).toBe('now');

    // The execution's span ends just after the run's end reached result(): wait for it.
    const executions = await eventually(async () => {
      const found = spans('durable.execution observed').filter((s) => attribute(s, 'durable.run_id') === runId);
      return found.length === 2 && found;
    }, "both executions' spans to end");
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
    const traced = await tracer.startActiveSpan('POST /orders', async (request) => {
      const handle = await t.client.start(Observed, {});
      request.end();
      return { runId: handle.runId, traceId: request.spanContext().traceId };
    });
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
      const [, second] = await eventually(async () => {
        const found = spans('durable.execution observed').filter((s) => attribute(s, 'durable.run_id') === runId);
        return found.length === 2 && found;
      }, "both executions' spans to end");
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
    expect(await registry.metrics()).toContain('durable_claim_pass_duration_seconds_bucket');
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
});
