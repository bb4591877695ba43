import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { defineSignal, DurableModule, DurableWorkflow, Workflow, WorkflowClient, WorkflowContext } from 'nestjs-durable';
import { RUN_ID_PARAM_LENGTH } from 'nestjs-durable/dashboard/dashboard-api-gate';
import { RunChangeFeed } from 'nestjs-durable/dashboard/run-change-feed';
import { Approval, Breaks, NapLong, operatorWorkflows, ParentOfReview, Review, ReviewThenClose } from '../fixtures/operator.workflows';
import { createApplication, Db, DurableTestApp, eventually, PLATFORMS, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
const mutation = { ...auth, 'x-durable-request': '1', 'content-type': 'application/json' };

/** The application's own guard: a user header stands in for its login. */
@Injectable()
class AppLoginGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const user = request.headers['x-user'];
    if (!user) return false;
    request.user = { id: user };
    return true;
  }
}

/** A signal declared with a class-validator DTO (nested): the dashboard gets its JSON Schema too. */
class ParcelDto {
  @IsInt() @Min(1) grams!: number;
}
class DispatchDto {
  @IsString() carrier!: string;
  @ValidateNested({ each: true }) @Type(() => ParcelDto) parcels!: ParcelDto[];
}
const Dispatched = defineSignal('dispatched', DispatchDto);

@Workflow('dispatch', { signals: [Dispatched] })
class Dispatch implements DurableWorkflow<null, DispatchDto> {
  run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal(Dispatched);
  }
}

/** A signal whose schema itself fails (a bug in its refine): a delivery throws an Error that is not the library's. */
const Broken = defineSignal(
  'broken',
  z.object({}).refine(() => {
    throw new TypeError('the refine is broken');
  }),
);
/** The runs executing, each held until the test opens its gate: a run that is running, with nothing to resume. */
const gates = new Map<string, () => void>();

@Workflow('gated')
class Gated implements DurableWorkflow<null, null> {
  async run(_: null, ctx: WorkflowContext) {
    await new Promise<void>((open) => gates.set(ctx.runId, open));
    return null;
  }
}

@Workflow('broken-schema', { signals: [Broken] })
class BrokenSchema implements DurableWorkflow<null, unknown> {
  run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal(Broken);
  }
}

async function call(t: DurableTestApp, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await fetch(`${t.url}/durable/api${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, body: json, headers: response.headers };
}

describe.each(PLATFORMS)('dashboard REST API on %s', (platform) => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({
      schema,
      providers: [...operatorWorkflows, Dispatch, BrokenSchema, Gated],
      listen: true,
      platform,
      options: { dashboard: { auth: { token: TOKEN } } },
    });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  const waiting = async (runId: string) =>
    eventually(async () => (await t.client.getRun(runId).catch(() => undefined))?.status === 'waiting', `${runId} to wait`);

  it('lists runs newest first with filters and keyset paging, and refuses a bad filter with 400', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await t.client.start(Review, { orderId: `list-${i}` })).runId);
    for (const id of ids) await waiting(id);
    const first = await call(t, 'GET', '/runs?workflow=review&status=waiting&limit=2', auth);
    expect(first.status).toBe(200);
    expect(first.body.runs.map((r: any) => r.runId)).toEqual([ids[2], ids[1]]);
    expect(first.body.runs[0]).toMatchObject({
      workflow: 'review',
      status: 'waiting',
      waiting: { kind: 'signal', name: 'approval' },
      maxAttempts: 5,
      input: { orderId: 'list-2' },
    });
    const second = await call(t, 'GET', `/runs?workflow=review&status=waiting&limit=2&cursor=${first.body.nextCursor}`, auth);
    expect(second.body.runs.map((r: any) => r.runId)).toContain(ids[0]);
    const bySignal = await call(t, 'GET', '/runs?waitingFor=signal&signal=approval', auth);
    expect(bySignal.body.runs.length).toBeGreaterThanOrEqual(3);
    const byPrefix = await call(t, 'GET', `/runs?q=${ids[0].slice(0, 8)}`, auth);
    expect(byPrefix.body.runs.map((r: any) => r.runId)).toContain(ids[0]);
    for (const bad of ['status=nope', 'limit=0', 'limit=abc', 'waitingFor=x', 'cursor=12x']) {
      const refused = await call(t, 'GET', `/runs?${bad}`, auth);
      expect([bad, refused.status, refused.body.code]).toEqual([bad, 400, 'INVALID_ARGUMENT']);
    }
  });

  it('a status given more than once is a list: the runs of any of them', async () => {
    const waits = (await t.client.start(Review, { orderId: 'status-list' })).runId;
    const fails = (await t.client.start(Breaks, null)).runId;
    await waiting(waits);
    await eventually(async () => (await t.client.getRun(fails)).status === 'failed', 'a run to fail');
    const both = await call(t, 'GET', '/runs?status=waiting&status=failed&limit=500', auth);
    expect(both.status).toBe(200);
    expect(both.body.runs.map((r: any) => r.runId)).toEqual(expect.arrayContaining([waits, fails]));
    expect(new Set(both.body.runs.map((r: any) => r.status))).toEqual(new Set(['waiting', 'failed']));
  });

  it('shows a run with its journal, signals, messages, children, parent and history; 404 for an unknown run', async () => {
    const parent = await t.client.start(ParentOfReview, { orderId: 'detail' });
    const childId = `${parent.runId}/review`;
    await waiting(childId);
    await waiting(parent.runId);
    await t.signals.send(childId, 'events', 'e1', { kind: 'created' });
    const child = await call(t, 'GET', `/runs/${encodeURIComponent(childId)}`, auth);
    expect(child.status).toBe(200);
    expect(child.body.run).toMatchObject({ runId: childId, parentRunId: parent.runId, status: 'waiting' });
    expect(child.body.steps[0]).toMatchObject({
      key: 'check',
      kind: 'step',
      outcome: 'ok',
      result: { orderId: 'detail', at: '2026-01-01T00:00:00.000Z' },
    });
    expect(child.body.steps[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(child.body.pendingSignals).toEqual([
      { name: 'approval', awaited: true, jsonSchema: expect.objectContaining({ type: 'object', required: ['approved', 'by'] }) },
    ]);
    expect(child.body.messages).toEqual([
      expect.objectContaining({ channel: 'events', key: 'e1', seq: 1, payload: { kind: 'created' }, ackedAt: null }),
    ]);
    expect(child.body.parent).toEqual({ runId: parent.runId, workflow: 'parent-of-review', status: 'waiting' });
    expect(child.body.history.map((h: any) => h.event)).toEqual(expect.arrayContaining(['started', 'parked', 'message-sent']));
    const parentView = await call(t, 'GET', `/runs/${encodeURIComponent(parent.runId)}`, auth);
    expect(parentView.body.children).toEqual([{ runId: childId, workflow: 'review', status: 'waiting', step: 'review', reusedFrom: null }]);
    const missing = await call(t, 'GET', '/runs/nope', auth);
    expect([missing.status, missing.body.code]).toEqual([404, 'RUN_NOT_FOUND']);
  });

  it('sends the newest 500 history rows with a run, and the earlier ones a page at a time, without a gap or a repeat; a bad page request is a 400', async () => {
    const run = await t.client.start(NapLong, null);
    await waiting(run.runId);
    await db.query(
      `INSERT INTO durable.history (run_id, run_day, event, actor, detail)
       SELECT $1, (SELECT run_day FROM durable.runs WHERE id = $1), 'noted', 'test', jsonb_build_object('n', n) FROM generate_series(1, 1200) n`,
      [run.runId],
    );
    const all = (await db.query<{ id: string }>(`SELECT id FROM durable.history WHERE run_id = $1 ORDER BY id`, [run.runId])).map((r) =>
      String(r.id),
    );
    const detail = (await call(t, 'GET', `/runs/${encodeURIComponent(run.runId)}`, auth)).body;
    expect([detail.history.length, detail.historyMore]).toEqual([500, true]);
    let shown: string[] = detail.history.map((h: any) => h.id);
    for (let more = true; more;) {
      const page = await call(t, 'GET', `/runs/${encodeURIComponent(run.runId)}/history?before=${shown[0]}`, auth);
      expect(page.status).toBe(200);
      shown = [...page.body.history.map((h: any) => h.id), ...shown];
      more = page.body.historyMore;
    }
    expect(shown).toEqual(all);
    const limited = await call(t, 'GET', `/runs/${encodeURIComponent(run.runId)}/history?before=${all[10]}&limit=3`, auth);
    expect([limited.body.history.map((h: any) => h.id), limited.body.historyMore]).toEqual([all.slice(7, 10), true]);

    for (const [query, field] of [
      ['', 'before'],
      ['?before=abc', 'before'],
      ['?before=-1', 'before'],
      ['?before=9999999999999999999', 'before'], // past a bigint: refused here, not by the database
      [`?before=${all[1]}&limit=0`, 'limit'],
      [`?before=${all[1]}&limit=501`, 'limit'],
      [`?before=${all[1]}&page=2`, 'page'],
    ]) {
      const refused = await call(t, 'GET', `/runs/${encodeURIComponent(run.runId)}/history${query}`, auth);
      expect([refused.status, refused.body.code, JSON.stringify(refused.body)]).toEqual([
        400,
        'INVALID_ARGUMENT',
        expect.stringContaining(field),
      ]);
    }
    const missing = await call(t, 'GET', `/runs/nope/history?before=1`, auth);
    expect([missing.status, missing.body.code]).toEqual([404, 'RUN_NOT_FOUND']);
    await t.client.cancel(run.runId);
  });

  it("lists a fork's reused children (spawned before its fromStep) among its children, naming the run that started them; a run lists its forks", async () => {
    const source = await t.client.start(ParentOfReview, { orderId: 'fork-children' });
    const childId = `${source.runId}/review`;
    await waiting(childId);
    await t.signals.signal(childId, 'approval', { approved: true, by: 'ops' });
    await source.result({ timeout: '10s' });
    const fork = await call(t, 'POST', `/runs/${encodeURIComponent(source.runId)}/fork`, mutation, { fromStep: 'child-result:review' });
    expect(fork.status).toBe(201);
    await t.client.handle(fork.body.runId).result({ timeout: '10s' });
    const forkView = await call(t, 'GET', `/runs/${encodeURIComponent(fork.body.runId)}`, auth);
    expect(forkView.body.children).toEqual([
      { runId: childId, workflow: 'review', status: 'completed', step: 'review', reusedFrom: source.runId },
    ]);
    const sourceView = await call(t, 'GET', `/runs/${encodeURIComponent(source.runId)}`, auth);
    expect(sourceView.body.children).toEqual([
      { runId: childId, workflow: 'review', status: 'completed', step: 'review', reusedFrom: null },
    ]);
    // Its forks come from the runs themselves, not from its history (whose rows the detail sends only the newest 500 of).
    await db.query(`DELETE FROM durable.history WHERE run_id = $1 AND event = 'forked'`, [source.runId]);
    expect((await call(t, 'GET', `/runs/${encodeURIComponent(source.runId)}`, auth)).body.forks).toEqual([fork.body.runId]);
    expect(forkView.body.forks).toEqual([]);
  });

  it('starts a run (201, or 200 when the id exists) and refuses an unknown workflow or a bad body with 400', async () => {
    const created = await call(t, 'POST', '/runs', mutation, { workflow: 'nap-long', input: null, runId: 'api-start-1' });
    expect([created.status, created.body]).toEqual([201, { runId: 'api-start-1', created: true }]);
    const again = await call(t, 'POST', '/runs', mutation, { workflow: 'nap-long', input: null, runId: 'api-start-1' });
    expect([again.status, again.body.created]).toEqual([200, false]);
    const conflict = await call(t, 'POST', '/runs', mutation, { workflow: 'review', input: {}, runId: 'api-start-1' });
    expect([conflict.status, conflict.body.code]).toEqual([409, 'RUN_CONFLICT']);
    const unknown = await call(t, 'POST', '/runs', mutation, { workflow: 'nope', input: {} });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'WORKFLOW_NOT_FOUND']);
    for (const body of [[], 'null', { input: 1 }, { workflow: 42 }, { workflow: 'x'.repeat(201) }]) {
      const refused = await call(t, 'POST', '/runs', mutation, body);
      expect(refused.status).toBe(400);
    }
    const started = await db.query(`SELECT actor FROM durable.history WHERE run_id = 'api-start-1' AND event = 'started'`);
    expect(started).toEqual([{ actor: 'token' }]);
  });

  it("delivers a signal: 201 accepted, 200 redelivery, 400 with the schema's messages, 409 when closed; the actor is recorded", async () => {
    const run = await t.client.start(ReviewThenClose, null);
    await waiting(run.runId);
    const invalid = await call(t, 'POST', `/runs/${run.runId}/signals/approval`, mutation, { payload: { approved: 'yes' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('INVALID_PAYLOAD');
    expect(invalid.body.details.issues.map((i: any) => i.path).sort()).toEqual(['approved', 'by']);
    const undeclared = await call(t, 'POST', `/runs/${run.runId}/signals/other`, mutation, { payload: 1 });
    expect([undeclared.status, undeclared.body.code]).toEqual([400, 'UNKNOWN_SIGNAL']);
    const missingPayload = await call(t, 'POST', `/runs/${run.runId}/signals/approval`, mutation, {});
    expect(missingPayload.status).toBe(400);
    expect(await db.count('signals', 'run_id = $1', [run.runId])).toBe(0);

    const accepted = await call(t, 'POST', `/runs/${run.runId}/signals/approval`, mutation, { payload: { approved: true, by: 'ops' } });
    expect([accepted.status, accepted.body.accepted]).toEqual([201, true]);
    const redelivered = await call(t, 'POST', `/runs/${run.runId}/signals/approval`, mutation, {
      payload: { approved: false, by: 'late' },
    });
    expect([redelivered.status, redelivered.body.accepted]).toEqual([200, false]);
    await t.signals.signal(run.runId, 'close', null);
    await run.result({ timeout: '5s' });
    const closed = await call(t, 'POST', `/runs/${run.runId}/signals/approval`, mutation, { payload: { approved: true, by: 'x' } });
    expect([closed.status, closed.body.code]).toEqual([409, 'RUN_CLOSED']);
    expect(await db.query(`SELECT source FROM durable.signals WHERE run_id = $1 AND name = 'approval'`, [run.runId])).toEqual([
      { source: 'token' },
    ]);
    const unknownRun = await call(t, 'POST', '/runs/nope/signals/approval', mutation, { payload: 1 });
    expect(unknownRun.status).toBe(404);
  });

  it('sends a channel message: 201, 200 for a redelivered key', async () => {
    const run = await t.client.start(Review, { orderId: 'chan' });
    const sent = await call(t, 'POST', `/runs/${run.runId}/channels/events`, mutation, { key: 'k1', payload: { kind: 'a' } });
    expect([sent.status, sent.body]).toEqual([201, { runId: run.runId, channel: 'events', key: 'k1', accepted: true, seq: 1 }]);
    const again = await call(t, 'POST', `/runs/${run.runId}/channels/events`, mutation, { key: 'k1', payload: { kind: 'b' } });
    expect([again.status, again.body.accepted]).toEqual([200, false]);
    const noKey = await call(t, 'POST', `/runs/${run.runId}/channels/events`, mutation, { payload: {} });
    expect(noKey.status).toBe(400);
  });

  it('resume, cancel and retry answer 200 with the new status, 409 where the status does not allow it, 404 for unknown runs', async () => {
    const nap = await t.client.start(NapLong, null);
    await waiting(nap.runId);
    const resumed = await call(t, 'POST', `/runs/${nap.runId}/resume`, mutation);
    expect([resumed.status, resumed.body.resumed]).toEqual([200, true]);
    expect(await nap.result({ timeout: '5s' })).toBe('rested');
    // A run on its way (running) has nothing to end: the answer says so, where it read as a resume before.
    const gated = await t.client.start(Gated, null);
    await eventually(async () => gates.has(gated.runId), 'the gated run running');
    const onItsWay = await call(t, 'POST', `/runs/${gated.runId}/resume`, mutation);
    expect([onItsWay.status, onItsWay.body]).toEqual([200, { runId: gated.runId, status: 'running', resumed: false }]);
    gates.get(gated.runId)!();
    await gated.result({ timeout: '5s' });
    expect((await call(t, 'POST', `/runs/${nap.runId}/cancel`, mutation, { reason: 'late' })).status).toBe(409);
    expect((await call(t, 'POST', `/runs/${nap.runId}/retry`, mutation)).status).toBe(409);

    const broken = await t.client.start(Breaks, null);
    await expect(broken.result()).rejects.toThrow();
    const retried = await call(t, 'POST', `/runs/${broken.runId}/retry`, mutation);
    expect(retried.status).toBe(200);

    const review = await t.client.start(Review, { orderId: 'cancel' });
    const cancelled = await call(t, 'POST', `/runs/${review.runId}/cancel`, mutation, { reason: 'duplicate order' });
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled']);
    const history = await db.query(`SELECT event, actor, detail FROM durable.history WHERE run_id = $1 AND event = 'cancelled'`, [
      review.runId,
    ]);
    expect(history).toEqual([{ event: 'cancelled', actor: 'token', detail: { reason: 'duplicate order' } }]);
    for (const action of ['resume', 'cancel', 'retry']) expect((await call(t, 'POST', `/runs/nope/${action}`, mutation)).status).toBe(404);
  });

  it("bulk actions report each run's outcome: accepted, duplicate, unchanged, refused with its reason", async () => {
    const a = await t.client.start(Review, { orderId: 'bulk-a' });
    const b = await t.client.start(Review, { orderId: 'bulk-b' });
    await Promise.all([waiting(a.runId), waiting(b.runId)]);
    await t.signals.signal(b.runId, Approval, { approved: false, by: 'earlier' });
    await b.result({ timeout: '5s' });
    const c = await t.client.start(NapLong, null);
    const signal = await call(t, 'POST', '/bulk/signal', mutation, {
      runIds: [a.runId, b.runId, c.runId, 'missing'],
      name: 'approval',
      payload: { approved: true, by: 'bulk' },
    });
    expect(signal.status).toBe(200);
    expect(signal.body.results).toEqual([
      { runId: a.runId, outcome: 'accepted' },
      { runId: b.runId, outcome: 'refused', code: 'RUN_CLOSED', message: expect.any(String) },
      { runId: c.runId, outcome: 'accepted' }, // nap-long declares no signals: any name is buffered
      { runId: 'missing', outcome: 'refused', code: 'RUN_NOT_FOUND', message: expect.any(String) },
    ]);
    const a2 = await t.client.start(Review, { orderId: 'bulk-a2' });
    await waiting(a2.runId);
    await t.signals.signal(a2.runId, Approval, { approved: true, by: 'first' });
    const duplicate = await call(t, 'POST', '/bulk/signal', mutation, {
      runIds: [a2.runId],
      name: 'approval',
      payload: { approved: true, by: 'again' },
    });
    expect(['duplicate', 'refused']).toContain(duplicate.body.results[0].outcome);

    await waiting(c.runId);
    const resume = await call(t, 'POST', '/bulk/resume', mutation, { filter: { workflow: 'nap-long', status: 'waiting' } });
    expect(resume.body.results).toContainEqual({ runId: c.runId, outcome: 'accepted' });
    // A run with nothing to end is `unchanged` (it read as accepted before).
    const gated = await t.client.start(Gated, null);
    await eventually(async () => gates.has(gated.runId), 'the gated run running');
    expect((await call(t, 'POST', '/bulk/resume', mutation, { runIds: [gated.runId] })).body).toEqual({
      results: [{ runId: gated.runId, outcome: 'unchanged' }],
    });
    gates.get(gated.runId)!();
    await gated.result({ timeout: '5s' });
    await t.client.handle(c.runId).result({ timeout: '5s' });
    const cancel = await call(t, 'POST', '/bulk/cancel', mutation, { runIds: [c.runId], reason: 'bulk' });
    expect(cancel.body).toEqual({
      results: [{ runId: c.runId, outcome: 'refused', code: 'INVALID_TRANSITION', message: expect.any(String) }],
    }); // the resume let it finish
    // An empty status list, or a key filter named __proto__ (dropped, either would widen the filter to every run), too.
    for (const body of [
      {},
      { runIds: [], name: 'x', payload: 1 },
      { runIds: ['a'], filter: {} },
      { filter: { nope: 1 } },
      { filter: { workflow: 'nap-long', status: [] } },
      '{"filter":{"workflow":"nap-long","keys":{"__proto__":"x"}}}',
    ]) {
      expect((await call(t, 'POST', '/bulk/resume', mutation, body)).status).toBe(400);
    }
    // A bad key name's error is the library's sentence, under the field's name, once.
    const badKey = await call(t, 'POST', '/bulk/resume', mutation, { filter: { workflow: 'nap-long', keys: { '-': 'x' } } });
    expect([badKey.status, badKey.body.message]).toEqual([
      400,
      'Body field "filter.keys": Business keys: the key name "-" must be a letter then up to 63 letters, digits, "_", "." or "-".',
    ]);
    // A filter matching more than 1,000 runs is refused whole: nothing is acted on, nothing written.
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wait, wait_kind, wake_at)
       SELECT 'many-' || g, 'nap-long', 'waiting', 'null', '{"kind":"sleep"}', 'sleep', now() + interval '1 day' FROM generate_series(1, 1001) g`,
    );
    const history = await db.count('history');
    const tooMany = await call(t, 'POST', '/bulk/cancel', mutation, { filter: { workflow: 'nap-long', status: 'waiting' } });
    expect([tooMany.status, tooMany.body.code, tooMany.body.message]).toEqual([
      400,
      'INVALID_ARGUMENT',
      expect.stringMatching(/more than 1000 runs/),
    ]);
    expect([await db.count('history'), await db.count('runs', `status = 'cancelled' AND id LIKE 'many-%'`)]).toEqual([history, 0]);
    await db.query(`DELETE FROM durable.runs WHERE id LIKE 'many-%'`);
  });

  it("a bulk action whose action throws an error that is not the library's refuses that run only (INTERNAL), and answers what it did to the others", async () => {
    const broken = await t.client.start(BrokenSchema, null);
    const other = await t.client.start(NapLong, null);
    const mixed = await call(t, 'POST', '/bulk/signal', mutation, { runIds: [broken.runId, other.runId], name: 'broken', payload: {} });
    expect([mixed.status, mixed.body.results]).toEqual([
      200,
      [
        { runId: broken.runId, outcome: 'refused', code: 'INTERNAL', message: expect.stringContaining('server log') },
        { runId: other.runId, outcome: 'accepted' },
      ],
    ]);
    expect(await db.count('signals', `name = 'broken'`)).toBe(1);
    // Runs refused by one error are logged together, once: an outage must not log a stack trace per run.
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const more = await Promise.all([1, 2, 3].map(() => t.client.start(BrokenSchema, null)));
      const refused = await call(t, 'POST', '/bulk/signal', mutation, { runIds: more.map((r) => r.runId), name: 'broken', payload: {} });
      expect(refused.body.results.map((r: { code: string }) => r.code)).toEqual(['INTERNAL', 'INTERNAL', 'INTERNAL']);
      const bulk = logged.mock.calls.filter(([message]) => String(message).startsWith('Bulk action'));
      expect(bulk.map(([message]) => String(message).split(':')[0])).toEqual([
        `Bulk action failed on 3 run(s) (${more.map((r) => r.runId).join(', ')})`,
      ]);
      expect(String(bulk[0][1])).toMatch(/\n\s+at /); // the stack, as the logger's own argument
    } finally {
      logged.mockRestore();
    }
  });

  it('lists workflows with their declared signals, channels and JSON Schemas', async () => {
    const { body } = await call(t, 'GET', '/workflows', auth);
    const review = body.workflows.find((w: any) => w.name === 'review');
    expect(review).toEqual({
      name: 'review',
      retry: { maxAttempts: 5 },
      queue: null,
      timeoutMs: null,
      deadlineGraceMs: 30_000,
      signals: [{ name: 'approval', jsonSchema: expect.objectContaining({ type: 'object' }) }],
      channels: [{ name: 'events', jsonSchema: expect.objectContaining({ type: 'object' }) }],
    });
    expect(body.workflows.find((w: any) => w.name === 'nap-long')).toMatchObject({ signals: null, channels: null });
    // A class-validator DTO gives its JSON Schema from its decorators, nested DTOs as $defs.
    const dispatch = body.workflows.find((w: any) => w.name === 'dispatch');
    expect(dispatch.signals[0].jsonSchema).toMatchObject({
      type: 'object',
      properties: { carrier: { type: 'string' }, parcels: { type: 'array', items: { $ref: '#/$defs/ParcelDto' } } },
      required: expect.arrayContaining(['carrier', 'parcels']),
      $defs: { ParcelDto: { properties: { grams: { type: 'integer', minimum: 1 } } } },
    });
  });

  it('stats count by status and wait kind, and show the oldest waiting run, overdue wakes and live instances', async () => {
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wake_at) VALUES ('overdue-1', 'unknown-here', 'pending', 'null', now() - interval '1 hour')`,
    );
    // The last sweep travels with the instance heartbeat (every leaseMs / 3).
    const { status, body } = await eventually(async () => {
      const response = await call(t, 'GET', '/stats', auth);
      return response.body.lastSweepAt && response;
    }, 'a heartbeat after a sweep');
    expect(status).toBe(200);
    expect(body.byStatus.waiting).toBeGreaterThan(0);
    expect(body.waitingByKind.signal).toBeGreaterThan(0);
    expect(body.oldestWaiting).toMatchObject({ runId: expect.any(String), since: expect.any(String) });
    expect(body.overdue.count).toBeGreaterThanOrEqual(1);
    expect(body.instances).toEqual(expect.arrayContaining([expect.objectContaining({ alive: true, heartbeatAt: expect.any(String) })]));
    expect(body.lastSweepAt).toEqual(expect.any(String));
    await db.query(`DELETE FROM durable.runs WHERE id = 'overdue-1'`);
  });

  it('bodies over 1 MiB answer 413 (whatever the app parser allows); 200 kB is accepted; malformed JSON is a 400; a body that is not JSON is a 415 and nothing is done', async () => {
    const run = await t.client.start(Review, { orderId: 'big' });
    const big = await call(
      t,
      'POST',
      `/runs/${run.runId}/channels/events`,
      mutation,
      JSON.stringify({ key: 'big', payload: { kind: 'x'.repeat(1_100_000) } }),
    );
    expect([big.status, big.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const medium = await call(t, 'POST', `/runs/${run.runId}/channels/events`, mutation, {
      key: 'medium',
      payload: { kind: 'x'.repeat(200_000) },
    });
    expect(medium.status).toBe(201);
    const malformed = await call(t, 'POST', `/runs/${run.runId}/channels/events`, mutation, '{"key": "m", "payload": ');
    expect([malformed.status, malformed.body.code]).toEqual([400, 'INVALID_JSON']);
    expect(JSON.stringify(malformed.body)).not.toMatch(/at .*\.js/);
    // A cancel's body is optional: sent as text (fetch's default for a string) or as a form, Express dropped it and cancelled.
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
      const refused = await call(t, 'POST', `/runs/${run.runId}/cancel`, { ...mutation, 'content-type': type }, '{"reason":"typed"}');
      expect([refused.status, refused.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    }
    // Express routes paths whatever their case: the gate in front of its parsers matches them so too (so does Fastify here).
    const cased = await fetch(`${t.url}/DURABLE/api/runs/${run.runId}/cancel`, {
      method: 'POST',
      headers: { ...mutation, 'content-type': 'text/plain;charset=UTF-8' },
      body: '{"reason":"typed"}',
    });
    expect(cased.status).toBe(415);
    expect((await t.client.getRun(run.runId)).status).not.toBe('cancelled');
  });

  it('filters runs by creation and last-change ranges, sorts by either both ways with keyset pages, and counts the matches', async () => {
    const [{ t0 }] = await db.query(`SELECT now() AS t0`);
    const ids: string[] = [];
    // One at a time: each parks (its last change) before the next starts, so last change follows creation.
    for (let i = 0; i < 3; i++) {
      ids.push((await t.client.start(Review, { orderId: `range-${i}` }, { keys: { batch: `range-${platform}` } })).runId);
      await waiting(ids[i]);
    }
    const after = `createdAfter=${encodeURIComponent(new Date(t0).toISOString())}`;
    const mine = `key.batch=range-${platform}`;
    // The oldest, touched last, comes first by last change; last by creation.
    await t.signals.signal(ids[0], Approval, { approved: true, by: 'range' });
    await eventually(async () => (await t.client.getRun(ids[0])).status === 'completed', 'the first run to complete');
    const byCreation = await call(t, 'GET', `/runs?${mine}&${after}`, auth);
    expect(byCreation.body.runs.map((r: any) => r.runId)).toEqual([ids[2], ids[1], ids[0]]);
    expect(byCreation.body.total).toEqual({ count: 3, estimated: false });
    const oldestFirst = await call(t, 'GET', `/runs?${mine}&order=asc`, auth);
    expect(oldestFirst.body.runs.map((r: any) => r.runId)).toEqual(ids);
    const first = await call(t, 'GET', `/runs?${mine}&sort=updated&limit=2`, auth);
    expect(first.body.runs.map((r: any) => r.runId)).toEqual([ids[0], ids[2]]);
    const second = await call(t, 'GET', `/runs?${mine}&sort=updated&limit=2&cursor=${first.body.nextCursor}`, auth);
    expect([second.body.runs.map((r: any) => r.runId), second.body.nextCursor]).toEqual([[ids[1]], undefined]);
    const [{ t1 }] = await db.query(`SELECT updated_at AS t1 FROM durable.runs WHERE id = $1`, [ids[0]]);
    const changedSince = await call(t, 'GET', `/runs?${mine}&updatedAfter=${encodeURIComponent(new Date(t1).toISOString())}`, auth);
    expect(changedSince.body.runs.map((r: any) => r.runId)).toEqual([ids[0]]);
    const before = await call(t, 'GET', `/runs?${mine}&createdBefore=${encodeURIComponent(new Date(t0).toISOString())}`, auth);
    expect(before.body).toMatchObject({ runs: [], total: { count: 0, estimated: false } });
    // Bad input names the parameter; a cursor of one order is refused by the other.
    const bad = await call(t, 'GET', '/runs?createdAfter=yesterday&sort=name', auth);
    expect([bad.status, bad.body.code, bad.body.message]).toEqual([
      400,
      'INVALID_ARGUMENT',
      expect.stringMatching(/createdAfter.*sort|sort.*createdAfter/s),
    ]);
    const crossed = await call(t, 'GET', `/runs?${mine}&cursor=${first.body.nextCursor}`, auth);
    expect([crossed.status, crossed.body.code]).toEqual([400, 'INVALID_ARGUMENT']);
  });

  it("counts the last hour's and day's runs started, completed, failed and parked per bucket for the overview's charts", async () => {
    const run = await t.client.start(Review, { orderId: 'activity' });
    await waiting(run.runId);
    const counts = async () =>
      (
        await db.query(
          `SELECT count(*) FILTER (WHERE event = 'started')::int AS started, count(*) FILTER (WHERE event = 'parked')::int AS parked FROM durable.history`,
        )
      )[0];
    // Other runs of this file may move meanwhile: the answer lies between the counts read before and after it.
    const low = await counts();
    const hour = await call(t, 'GET', '/activity?range=1h', auth);
    const high = await counts();
    expect([hour.status, hour.body.range, hour.body.bucketMs, hour.body.buckets.length]).toEqual([200, '1h', 60_000, 61]);
    for (const key of ['started', 'parked'] as const) {
      const total = hour.body.buckets.reduce((sum: number, b: any) => sum + b[key], 0);
      expect([key, total >= low[key] && total <= high[key]]).toEqual([key, true]);
    }
    expect(hour.body.buckets[hour.body.buckets.length - 1]).toEqual({
      at: expect.any(String),
      started: expect.any(Number),
      completed: expect.any(Number),
      failed: expect.any(Number),
      parked: expect.any(Number),
    });
    const day = await call(t, 'GET', '/activity?range=24h', auth);
    expect([day.body.bucketMs, day.body.buckets.length]).toEqual([900_000, 97]);
    const bad = await call(t, 'GET', '/activity?range=1w', auth);
    expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_ARGUMENT']);
  });

  it('pushes run changes as server-sent events: the ids of runs whose history grew, from any instance; 401 without credentials', async () => {
    expect((await fetch(`${t.url}/durable/api/events`)).status).toBe(401);
    const abort = new AbortController();
    const response = await fetch(`${t.url}/durable/api/events`, { headers: auth, signal: abort.signal });
    try {
      expect([response.status, response.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      const seen = async (part: string) => {
        while (!text.includes(part)) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the event stream ended');
          text += value;
        }
      };
      // The feed starts from the history's end when the first dashboard connects; `ready` says it has read it.
      await seen('event: ready');
      const run = await t.client.start(Review, { orderId: 'live-1' });
      await seen(run.runId);
      expect(text).toMatch(new RegExp(`event: runs\\nid: \\d+\\ndata: \\{"runIds":\\[[^\\]]*"${run.runId}"`));
      // A change written by another instance (here: straight into the history) reaches this one's stream too.
      await db.query(
        `INSERT INTO durable.history (run_id, run_day, event, actor) VALUES ('elsewhere-1', timezone('UTC', now())::date, 'signal-delivered', 'other')`,
      );
      await seen('elsewhere-1');
    } finally {
      abort.abort();
    }
  });

  it('an application with a dashboard open (its event stream) closes: the stream ends, and app.close() does not wait for the browser to leave', async () => {
    const own = await startApp({
      schema,
      providers: operatorWorkflows,
      listen: true,
      platform,
      options: { dashboard: { auth: { token: TOKEN } } },
    });
    const abort = new AbortController();
    try {
      const response = await fetch(`${own.url}/durable/api/events`, { headers: auth, signal: abort.signal });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('event: ready')) text += (await reader.read()).value ?? '';
      await own.close(); // waited for the stream, whose pings keep it from ever being idle, until the test's timeout
      for (;;) if ((await reader.read()).done) break; // the stream ended with the application
      // A stream opened once the shutdown began (a request already on its way) ends at once too.
      expect(await lastValueFrom(own.get(RunChangeFeed).events().pipe(toArray()))).toEqual([]);
    } finally {
      abort.abort();
    }
  });

  it('serves the UI: the path without its slash redirects to it, the page and its assets carry the CSP and their types', async () => {
    const bare = await fetch(`${t.url}/durable?tab=runs`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/durable/?tab=runs']);
    const page = await fetch(`${t.url}/durable/`);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    const script = html.match(/src="\.\/(assets\/[^"]+\.js)"/)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${t.url}/durable/${script}`);
    expect([asset.status, asset.headers.get('content-type'), asset.headers.get('cache-control')]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'public, max-age=31536000, immutable',
    ]);
    expect((await asset.text()).length).toBeGreaterThan(1000);
    const missing = await fetch(`${t.url}/durable/assets/nope.js`);
    expect([missing.status, ((await missing.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
    const escape = await fetch(`${t.url}/durable/..%2f..%2fpackage.json`);
    expect(escape.status).toBe(404);
  });
});

describe.each(PLATFORMS)('dashboard auth modes on %s', (platform) => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  afterAll(() => db.dropSchema());

  it('refuses to boot without an auth option, saying how to choose', () => {
    expect(() => DurableModule.forRoot({ connection: 'postgres://x', dashboard: {} as never })).toThrow(/auth: \{ guard: YourAuthGuard \}/);
    expect(() => DurableModule.forRoot({ connection: 'postgres://x', dashboard: { auth: { token: 'short' } } })).toThrow(
      /at least 16 characters/,
    );
    expect(() =>
      DurableModule.forRoot({ connection: 'postgres://x', dashboard: { auth: { token: TOKEN, insecureNoAuth: true } as never } }),
    ).toThrow(/exactly one mode/);
  });

  it("guard mode: the application's guard decides, and its user is the actor in the history", async () => {
    const t = await startApp({
      schema,
      providers: operatorWorkflows,
      listen: true,
      platform,
      options: { dashboard: { auth: { guard: AppLoginGuard } } },
    });
    try {
      expect((await call(t, 'GET', '/runs')).status).toBe(401);
      expect((await call(t, 'GET', '/runs', { 'x-user': 'dana' })).status).toBe(200);
      const session = await call(t, 'GET', '/session', { 'x-user': 'dana' });
      expect(session.body).toEqual({ auth: 'guard', readOnly: false, authenticated: true, actor: 'dana' });
      expect((await call(t, 'GET', '/session')).body).toMatchObject({ auth: 'guard', authenticated: false });
      const started = await call(
        t,
        'POST',
        '/runs',
        { 'x-user': 'dana', 'x-durable-request': '1', 'content-type': 'application/json' },
        { workflow: 'nap-long', input: null },
      );
      expect(started.status).toBe(201);
      const [row] = await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'started'`, [started.body.runId]);
      expect(row.actor).toBe('dana');
    } finally {
      await t.close();
    }
  });

  it("who acted: a token holder is recorded by the name they gave at sign-in, and an actor resolver names the guard's user its own way", async () => {
    const named = await startApp({
      schema,
      providers: operatorWorkflows,
      listen: true,
      platform,
      options: { dashboard: { auth: { token: TOKEN } } },
    });
    try {
      const start = (headers: Record<string, string>) =>
        call(named, 'POST', '/runs', { ...mutation, ...headers }, { workflow: 'nap-long', input: null });
      const withName = await start({ 'x-durable-operator': encodeURIComponent('Dana Ł. Kowalska') });
      const without = await start({});
      const actors = await db.query(`SELECT run_id, actor FROM durable.history WHERE event = 'started' AND run_id = ANY($1::text[])`, [
        [withName.body.runId, without.body.runId],
      ]);
      expect(Object.fromEntries(actors.map((r: any) => [r.run_id, r.actor]))).toEqual({
        [withName.body.runId]: 'Dana Ł. Kowalska (token)',
        [without.body.runId]: 'token',
      });
      expect((await call(named, 'GET', '/session', { ...auth, 'x-durable-operator': 'dana' })).body.actor).toBe('dana (token)');
    } finally {
      await named.close();
    }
    const resolved = await startApp({
      schema,
      providers: operatorWorkflows,
      listen: true,
      platform,
      options: { dashboard: { auth: { guard: AppLoginGuard }, actor: (request: any) => `sso:${request.user.id}` } },
    });
    try {
      const started = await call(
        resolved,
        'POST',
        '/runs',
        { 'x-user': 'dana', 'x-durable-request': '1', 'content-type': 'application/json' },
        {
          workflow: 'nap-long',
          input: null,
        },
      );
      const [row] = await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'started'`, [started.body.runId]);
      expect(row.actor).toBe('sso:dana');
    } finally {
      await resolved.close();
    }
    expect(() =>
      DurableModule.forRoot({ connection: 'postgres://x', dashboard: { auth: { token: TOKEN }, actor: 'dana' as never } }),
    ).toThrow(/dashboard.actor must be a function/);
  });

  it('readOnly: reads work, every mutation answers 403 and writes nothing', async () => {
    const t = await startApp({
      schema,
      providers: operatorWorkflows,
      listen: true,
      platform,
      options: { dashboard: { auth: { token: TOKEN }, readOnly: true } },
    });
    try {
      const run = await t.client.start(Review, { orderId: 'ro' });
      await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to park');
      const before = await db.count('history');
      expect((await call(t, 'GET', `/runs/${run.runId}`, auth)).status).toBe(200);
      for (const [path, body] of [
        ['/runs', { workflow: 'review', input: {} }],
        [`/runs/${run.runId}/signals/approval`, { payload: { approved: true, by: 'x' } }],
        [`/runs/${run.runId}/cancel`, {}],
        ['/bulk/cancel', { runIds: [run.runId] }],
      ] as const) {
        const refused = await call(t, 'POST', path, mutation, body);
        expect([path, refused.status, refused.body.code]).toEqual([path, 403, 'READ_ONLY']);
      }
      expect(await db.count('history')).toBe(before);
      expect((await call(t, 'GET', '/session', auth)).body).toMatchObject({ readOnly: true, authenticated: true });
    } finally {
      await t.close();
    }
  });

  it("under an application's global prefix, the API keeps its own 1 MiB body limit", async () => {
    const { Test } = await import('@nestjs/testing');
    const moduleRef = await Test.createTestingModule({
      imports: [DurableModule.forRoot({ connection: process.env.DATABASE_URL!, schema, dashboard: { auth: { token: TOKEN } } })],
      providers: operatorWorkflows,
    }).compile();
    const app = createApplication(moduleRef, platform);
    app.setGlobalPrefix('v1');
    await app.listen(0, '127.0.0.1');
    try {
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const post = (size: number) =>
        fetch(`${url}/v1/durable/api/runs`, {
          method: 'POST',
          headers: mutation,
          body: JSON.stringify({ workflow: 'nap-long', input: 'x'.repeat(size) }),
        });
      expect((await post(200_000)).status).toBe(201); // over the app parser's default 100 kB
      expect((await post(1_100_000)).status).toBe(413);
      // Unknown paths, wrong methods, bad encoding and undeclared parameters answer in the API's shape there too.
      const refusals: Array<[string, string, number, string]> = [
        ['GET', '/v1/durable/api/no-such-route', 404, 'NOT_FOUND'],
        ['DELETE', '/v1/durable/api/runs', 405, 'METHOD_NOT_ALLOWED'],
        // Fastify's router refuses a URL it cannot decode before any hook of the module runs: same status, its own code.
        ['GET', '/v1/durable/api/runs/%E0%A4%A', 400, platform === 'fastify' ? 'FST_ERR_BAD_URL' : 'INVALID_ENCODING'],
        ['GET', '/v1/durable/api/runs?q[a]=1', 400, 'INVALID_ARGUMENT'],
      ];
      for (const [method, path, status, code] of refusals) {
        const response = await fetch(`${url}${path}`, { method, headers: mutation });
        expect([method, path, response.status, await response.json()]).toEqual([
          method,
          path,
          status,
          expect.objectContaining({ code, message: expect.any(String) }),
        ]);
      }
    } finally {
      await app.close();
    }
  });

  it('forRootAsync places the dashboard where its factory says', async () => {
    const { Test } = await import('@nestjs/testing');
    const moduleRef = await Test.createTestingModule({
      imports: [
        DurableModule.forRootAsync({
          useFactory: async () => ({
            connection: process.env.DATABASE_URL!,
            schema,
            dashboard: { path: '/ops/flows', auth: { token: TOKEN } },
          }),
        }),
      ],
    }).compile();
    const app = createApplication(moduleRef, platform);
    await app.listen(0, '127.0.0.1');
    try {
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      expect((await fetch(`${url}/ops/flows/api/stats`, { headers: auth })).status).toBe(200);
      expect((await fetch(`${url}/durable/api/stats`, { headers: auth })).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});

describe("the dashboard on Fastify: run ids longer than its router's default parameter length", () => {
  const schema = uniqueSchema();
  afterAll(() => new Db(schema).dropSchema());

  it("reaches a run whose id is longer than 100 characters once the adapter's maxParamLength is raised, and warns at boot while it is not", async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const warnings = () => warned.mock.calls.map(([message]) => String(message)).filter((m) => m.includes('maxParamLength'));
    /** The run's page on an application whose Fastify adapter takes `adapter`, and the warnings its boot logged. */
    const pageOn = async (adapter: object) => {
      const { Test } = await import('@nestjs/testing');
      const { FastifyAdapter } = await import('@nestjs/platform-fastify');
      const moduleRef = await Test.createTestingModule({
        imports: [DurableModule.forRoot({ connection: process.env.DATABASE_URL!, schema, dashboard: { auth: { token: TOKEN } } })],
        providers: operatorWorkflows,
      }).compile();
      const app = moduleRef.createNestApplication(new FastifyAdapter(adapter), { logger: false });
      warned.mockClear();
      await app.listen(0, '127.0.0.1');
      try {
        await app.get(WorkflowClient).start(Review, { orderId: 'long' }, { runId: id });
        const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
        const page = await fetch(`${url}/durable/api/runs/${encodeURIComponent(id)}`, { headers: auth });
        return { status: page.status, warnings: warnings() };
      } finally {
        await app.close();
      }
    };
    // A schedule's slot run: schedule:<name of up to 120 characters>:<slot>.
    const id = `schedule:${'x'.repeat(120)}:2026-12-05T00:00:00.000Z`;
    try {
      expect(await pageOn({ routerOptions: { maxParamLength: RUN_ID_PARAM_LENGTH } })).toEqual({ status: 200, warnings: [] });
      // The top-level option, from before Fastify 5.5 (deprecated since, still honoured): Nest's adapter fills routerOptions' default beside it.
      expect(await pageOn({ maxParamLength: RUN_ID_PARAM_LENGTH })).toEqual({ status: 200, warnings: [] });
      const plain = await pageOn({});
      expect(plain.status).not.toBe(200); // the router did not match the parameter: the API's fallback answered
      expect(plain.warnings).toEqual([
        expect.stringMatching(/^Fastify's maxParamLength is 100: the dashboard cannot reach a run whose id is longer/),
      ]);
    } finally {
      warned.mockRestore();
    }
  });
});
