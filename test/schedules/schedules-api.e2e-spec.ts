import { DurableWorkflow, ScheduledInput, ScheduleService, Workflow } from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'schedules-api-token-0123456789';

@Workflow('digest', { schedules: [{ name: 'hourly-digest', cron: '0 * * * *', timezone: 'Europe/Paris' }] })
class Digest implements DurableWorkflow<ScheduledInput, string> {
  async run(input: ScheduledInput) {
    return input.scheduledAt.toISOString();
  }
}

/** A schedule whose input, and whose runs' output, are not plain JSON: a BigInt, a Set. */
@Workflow('big-digest')
class BigDigest implements DurableWorkflow<ScheduledInput & { fromId: bigint; tags: Set<string> }, bigint> {
  async run(input: ScheduledInput & { fromId: bigint }) {
    return input.fromId + 1n;
  }
}

describe('REST: /schedules', () => {
  const schema = uniqueSchema('sapi');
  let t: DurableTestApp;
  let readOnly: DurableTestApp;
  const call = (app: DurableTestApp, method: string, path: string, body?: unknown) =>
    fetch(`${app.url}/durable/api${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'x-durable-request': '1', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    t = await startApp({ schema, providers: [Digest, BigDigest], listen: true, options: { dashboard: { auth: { token: TOKEN } } } });
    readOnly = await startApp({
      schema,
      providers: [Digest, BigDigest],
      listen: true,
      options: { dashboard: { auth: { token: TOKEN }, readOnly: true }, worker: { enabled: false } },
    });
  });
  afterAll(async () => {
    await Promise.all([t.close(), readOnly.close()]);
    await new Db(schema).dropSchema();
  });

  it('GET /schedules lists each ScheduleView; GET /schedules/:name adds its recent runs and skipped slots', async () => {
    const list = await call(t, 'GET', '/schedules');
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({
      schedules: [
        expect.objectContaining({
          name: 'hourly-digest',
          workflow: 'digest',
          cron: '0 * * * *',
          timezone: 'Europe/Paris',
          overlap: 'skip',
          paused: false,
          source: 'decorator',
          workflowMissing: false,
          operatorPaused: false,
          skippedCount: 0,
          nextFireTimes: expect.arrayContaining([expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/)]),
        }),
      ],
    });
    const triggered = await call(t, 'POST', '/schedules/hourly-digest/trigger');
    expect(triggered.status).toBe(200);
    const { runId } = (await triggered.json()) as { runId: string };
    await t.client.handle(runId).result();
    const detail = (await (await call(t, 'GET', '/schedules/hourly-digest')).json()) as Record<string, any>;
    expect(detail.schedule.lastRun).toEqual({ runId, status: 'completed', scheduledAt: expect.any(String) });
    expect(detail.runs.map((r: { runId: string }) => r.runId)).toEqual([runId]);
    expect(detail.skipped).toEqual([]);
    const filtered = (await (await call(t, 'GET', '/runs?schedule=hourly-digest')).json()) as { runs: Array<{ runId: string }> };
    expect(filtered.runs.map((r) => r.runId)).toEqual([runId]);
  });

  it('pause and resume answer the view; backfill with dryRun previews the runs it would start, then starts them', async () => {
    expect(await (await call(t, 'POST', '/schedules/hourly-digest/pause')).json()).toMatchObject({ paused: true });
    expect(await (await call(t, 'POST', '/schedules/hourly-digest/resume')).json()).toMatchObject({ paused: false });
    const range = { from: '2026-01-01T00:00:00Z', to: '2026-01-01T05:30:00Z' };
    const preview = await call(t, 'POST', '/schedules/hourly-digest/backfill', { ...range, dryRun: true });
    expect(await preview.json()).toEqual({
      dryRun: true,
      started: 6,
      skipped: 0,
      slots: 6,
      first: '2026-01-01T00:00:00.000Z',
      last: '2026-01-01T05:00:00.000Z',
    });
    expect(await t.get(ScheduleService).list()).toHaveLength(1);
    const done = await call(t, 'POST', '/schedules/hourly-digest/backfill', range);
    expect(await done.json()).toEqual({ dryRun: false, started: 6, skipped: 0 });
    await eventually(
      async () => (await t.client.listRuns({ schedule: 'hourly-digest', status: 'completed' })).runs.length === 7,
      'the runs',
    );
  });

  it('bad input answers 400 naming the field, an unknown schedule 404, and read-only mode 403', async () => {
    const bad = await call(t, 'POST', '/schedules/hourly-digest/backfill', { from: 'yesterday', to: '2026-01-01T00:00:00Z' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('Body field "from"') });
    const reversed = await call(t, 'POST', '/schedules/hourly-digest/backfill', {
      from: '2026-02-01T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
    });
    expect(await reversed.json()).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('must not be after to') });
    const tooMany = await call(t, 'POST', '/schedules/hourly-digest/backfill', {
      from: '2000-01-01T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
      dryRun: true,
    });
    expect([tooMany.status, ((await tooMany.json()) as { message: string }).message]).toEqual([
      400,
      expect.stringContaining('more than 10000 slots'),
    ]);
    const runs = await t.client.listRuns({ schedule: 'hourly-digest' });
    const badOverlap = await call(t, 'POST', '/schedules/hourly-digest/trigger', { overlap: 'sometimes' });
    expect([badOverlap.status, await badOverlap.json()]).toEqual([
      400,
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/Body field "overlap": must be one of skip, bufferOne, allow, cancelOther; got "sometimes"/),
      }),
    ]);
    const badExpected = await call(t, 'POST', '/schedules/hourly-digest/trigger', { overlap: 'allow', expectLastRun: '' });
    expect([badExpected.status, await badExpected.json()]).toEqual([
      400,
      expect.objectContaining({ message: expect.stringMatching(/Body field "expectLastRun": must not be empty/) }),
    ]);
    const unknownField = await call(t, 'POST', '/schedules/hourly-digest/trigger', { overlaps: 'allow' });
    expect(unknownField.status).toBe(400);
    expect((await t.client.listRuns({ schedule: 'hourly-digest' })).runs).toHaveLength(runs.runs.length);
    const missing = await call(t, 'GET', '/schedules/no-such');
    expect([missing.status, await missing.json()]).toEqual([404, expect.objectContaining({ code: 'SCHEDULE_NOT_FOUND' })]);
    const refused = await call(readOnly, 'POST', '/schedules/hourly-digest/pause');
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([403, 'READ_ONLY']);
    expect((await t.get(ScheduleService).get('hourly-digest')).paused).toBe(false);
  });

  it("a schedule whose input and runs' output hold a BigInt and a Set answers plain JSON: in the list, on its page, and from the pause it answers", async () => {
    const plain = { fromId: '10', tags: ['a'] };
    await t
      .get(ScheduleService)
      .create({ name: 'big', workflow: BigDigest, cron: '0 0 1 1 *', input: { fromId: 10n, tags: new Set(['a']) } });
    const { runId } = (await (await call(t, 'POST', '/schedules/big/trigger')).json()) as { runId: string };
    await t.client.handle(runId).result();
    const list = await call(t, 'GET', '/schedules');
    expect(list.status).toBe(200);
    const { schedules } = (await list.json()) as { schedules: Array<{ name: string; input: unknown }> };
    expect(schedules.find((s) => s.name === 'big')?.input).toEqual(plain);
    const detail = await call(t, 'GET', '/schedules/big');
    expect([detail.status, await detail.json()]).toEqual([
      200,
      expect.objectContaining({
        schedule: expect.objectContaining({ input: plain }),
        runs: [expect.objectContaining({ runId, output: '11' })],
      }),
    ]);
    const paused = await call(t, 'POST', '/schedules/big/pause');
    expect([paused.status, await paused.json()]).toEqual([200, expect.objectContaining({ paused: true, input: plain })]);
  });
});
