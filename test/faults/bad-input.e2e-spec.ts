import { Injectable } from '@nestjs/common';
import { runInNewContext } from 'node:vm';
import {
  DurableWorkflow,
  InvalidArgumentError,
  InvalidPayloadError,
  RunNotFoundError,
  UnknownSignalError,
  Workflow,
  WorkflowContext,
  WorkflowNotFoundError,
} from 'nestjs-durable';
import { operatorWorkflows, Review } from '../fixtures/operator.workflows';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'bad-input-token-0123456789abcdef';
const HEADERS = { authorization: `Bearer ${TOKEN}`, 'x-durable-request': '1', 'content-type': 'application/json' };
const TEN_MB = 'x'.repeat(10 * 1024 * 1024);
const deep = (depth: number) => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
};
const LONG = 'n'.repeat(10_000);
const SQLISH = `x'); DROP TABLE runs; --"\``;

@Injectable()
class Counter {
  n = 0;
}

@Workflow('echo-any')
class EchoAny implements DurableWorkflow<unknown, unknown> {
  constructor(private readonly counter: Counter) {}
  async run(input: unknown, ctx: WorkflowContext) {
    await ctx.step('count', () => ++this.counter.n);
    return input;
  }
}

/** Fails with a message Postgres text could not hold as is. */
@Workflow('nul-failure', { retry: { maxAttempts: 1 } })
class NulFailure implements DurableWorkflow<null, never> {
  async run(): Promise<never> {
    throw new Error('bad byte \u0000 and \ud800 here');
  }
}

/** A child whose derived id (parent id / step) is longer than a caller's run id may be. */
@Workflow('long-child-parent')
class LongChildParent implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const child = await ctx.startChild(EchoAny, 'child output', { step: 's'.repeat(200) });
    return child.result();
  }
}

@Workflow('waits-for-anything')
class WaitsForAnything implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal('done');
  }
}

describe('bad input: a named error or a 4xx, never a 500 or a hang, and nothing written', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({
      schema,
      providers: [Counter, EchoAny, WaitsForAnything, NulFailure, LongChildParent, ...operatorWorkflows],
      listen: true,
      options: { dashboard: { auth: { token: TOKEN } } },
    });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  const written = async () => {
    const [row] = await db.query(
      `SELECT (SELECT count(*) FROM durable.runs)::int + (SELECT count(*) FROM durable.signals)::int + (SELECT count(*) FROM durable.messages)::int + (SELECT count(*) FROM durable.history)::int AS n`,
    );
    return row.n as number;
  };

  it('through WorkflowClient and SignalService', async () => {
    const open = await t.client.start(WaitsForAnything, null);
    const declared = await t.client.start(Review, { orderId: 'declares-its-signals' });
    await eventually(async () => (await t.client.getRun(open.runId)).status === 'waiting', 'a run to wait');
    await eventually(async () => (await t.client.getRun(declared.runId)).status === 'waiting', 'a run to wait');
    const before = await written();
    const refusals: Array<[string, () => Promise<unknown>, new (...args: any[]) => Error]> = [
      ['a 10 MB input', () => t.client.start(EchoAny, TEN_MB), InvalidPayloadError],
      ['an input nested 10,000 deep', () => t.client.start(EchoAny, deep(10_000)), InvalidPayloadError],
      ['a function in the input', () => t.client.start(EchoAny, { f: () => 1 }), InvalidPayloadError],
      // Objects whose own fields do not stand for them: they came back as {} (or as their internals), unlike the first execution's.
      ['a URL in the input', () => t.client.start(EchoAny, { u: new URL('https://example.com/a') }), InvalidPayloadError],
      ['an Error in the input', () => t.client.start(EchoAny, { e: new Error('x') }), InvalidPayloadError],
      ['a Float64Array in the input', () => t.client.start(EchoAny, { f: new Float64Array([1.5]) }), InvalidPayloadError],
      ['an ArrayBuffer in the input', () => t.client.start(EchoAny, { b: new ArrayBuffer(2) }), InvalidPayloadError],
      ['a Promise in the input (an await missing)', () => t.client.start(EchoAny, { p: Promise.resolve(1) }), InvalidPayloadError],
      [
        'a cycle in the input',
        () =>
          t.client.start(
            EchoAny,
            (() => {
              const a: Record<string, unknown> = {};
              a.self = a;
              return a;
            })(),
          ),
        InvalidPayloadError,
      ],
      ['a workflow name of 10,000 characters', () => t.client.start(LONG, null), WorkflowNotFoundError],
      ['a runId of 10,000 characters', () => t.client.start(EchoAny, null, { runId: LONG }), InvalidArgumentError],
      ['a runId that is a number', () => t.client.start(EchoAny, null, { runId: 42 as never }), InvalidArgumentError],
      ['a 10 MB signal payload', () => t.signals.signal(open.runId, 'done', TEN_MB), InvalidPayloadError],
      ['a signal name of 10,000 characters', () => t.signals.signal(open.runId, LONG, 1), InvalidArgumentError],
      ['a signal name that is not a string', () => t.signals.signal(open.runId, 7 as never, 1), InvalidArgumentError],
      ['a message key of 10,000 characters', () => t.signals.send(open.runId, 'c', LONG, 1), InvalidArgumentError],
      ['a signal to an unknown run', () => t.signals.signal(SQLISH, 'done', 1), RunNotFoundError],
      ['a signal name the workflow does not declare', () => t.signals.signal(declared.runId, 'nope', 1), UnknownSignalError],
      ['a negative timeout for result()', () => t.client.handle(open.runId).result({ timeout: -1 }), InvalidArgumentError],
      ['a NaN timeout for result()', () => t.client.handle(open.runId).result({ timeout: Number.NaN }), InvalidArgumentError],
      ['an absurd timeout for result()', () => t.client.handle(open.runId).result({ timeout: '99999999d' }), InvalidArgumentError],
      ['a runId with a NUL character', () => t.client.start(EchoAny, null, { runId: 'a\u0000b' }), InvalidArgumentError],
      ['a runId with a lone surrogate', () => t.client.start(EchoAny, null, { runId: 'a\ud800b' }), InvalidArgumentError],
      ['a signal to a run id with a NUL character', () => t.signals.signal('a\u0000b', 'done', 1), RunNotFoundError],
      ['a getRun of an id with a NUL character', () => t.client.getRun('a\u0000b'), RunNotFoundError],
      ['a cancel of an id with a NUL character', () => t.client.cancel('a\u0000b'), RunNotFoundError],
      ['a cancel reason of 1,001 characters', () => t.client.cancel(open.runId, 'r'.repeat(1_001)), InvalidArgumentError],
      ['a cancel reason that is not text', () => t.client.cancel(open.runId, 42 as never), InvalidArgumentError],
      ['a signal name with a NUL character', () => t.signals.signal(open.runId, 'do\u0000ne', 1), InvalidArgumentError],
      ['a message key with a lone surrogate', () => t.signals.send(open.runId, 'c', 'k\udc00', 1), InvalidArgumentError],
      [
        'a filter with a status that does not exist',
        () => t.client.listRuns({ status: "waiting' OR 1=1 --" as never }),
        InvalidArgumentError,
      ],
      ['a filter with a NUL character in the workflow', () => t.client.listRuns({ workflow: 'a\u0000b' }), InvalidArgumentError],
      ['a cursor past the range of a bigint', () => t.client.listRuns({ cursor: '9999999999999999999' }), InvalidArgumentError],
    ];
    for (const [what, call, type] of refusals) {
      const error = await call().then(
        () => undefined,
        (e) => e,
      );
      expect([what, error?.constructor?.name]).toEqual([what, type.name]);
    }
    expect(await written()).toBe(before);
  });

  it('a Uint8Array keeps its bytes (it comes back as a Buffer) and a Date of another realm stays a Date; a refused object names its path', async () => {
    const foreign = runInNewContext('new Date("2026-01-02T03:04:05.000Z")') as Date;
    expect(foreign instanceof Date).toBe(false);
    const run = await t.client.start(EchoAny, { bytes: new Uint8Array([1, 2, 3]).subarray(1), when: foreign });
    const output = (await run.result({ timeout: '10s' })) as { bytes: Buffer; when: Date };
    expect([Buffer.isBuffer(output.bytes), [...output.bytes]]).toEqual([true, [2, 3]]);
    expect(output.when).toEqual(new Date('2026-01-02T03:04:05.000Z'));
    await expect(t.client.start(EchoAny, { nested: [{ u: new URL('https://example.com/a') }] })).rejects.toThrow(
      /\$\.nested\[0\]\.u is a URL with toJSON\(\)/,
    );
  });

  it('an error message with NUL and a lone surrogate fails the run cleanly (made storable), it does not wedge it', async () => {
    const run = await t.client.start(NulFailure, null);
    await expect(run.result({ timeout: '5s' })).rejects.toThrow('bad byte \\0 and \ufffd here');
  });

  it('a child id derived from a 200-character run id and a 200-character step is accepted', async () => {
    const run = await t.client.start(LongChildParent, null, { runId: 'p'.repeat(200) });
    expect(await run.result({ timeout: '10s' })).toBe('child output');
  });

  it('names with quotes and SQL fragments are plain data: they are stored and found as given', async () => {
    const run = await t.client.start(WaitsForAnything, null, { runId: SQLISH });
    await eventually(async () => (await t.client.getRun(SQLISH)).status === 'waiting', 'the oddly named run to wait');
    await t.signals.signal(SQLISH, 'done', { said: SQLISH });
    expect(await run.result({ timeout: '5s' })).toEqual({ said: SQLISH });
    expect(await db.count('runs')).toBeGreaterThan(0); // the table is still there
  });

  it('payloads Postgres jsonb would refuse, through the REST API, round-trip intact', async () => {
    const response = await fetch(`${t.url}/durable/api/runs`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ workflow: 'echo-any', input: { text: 'nul\u0000 and \ud800' } }),
    });
    expect(response.status).toBe(201);
    const { runId } = (await response.json()) as { runId: string };
    expect(await t.client.handle(runId).result({ timeout: '5s' })).toEqual({ text: 'nul\u0000 and \ud800' });
  });

  it('every REST endpoint answers bad input with a 4xx and the error shape, and writes nothing', async () => {
    const open = await t.client.start(WaitsForAnything, null);
    await eventually(async () => (await t.client.getRun(open.runId)).status === 'waiting', 'a run to wait');
    const id = encodeURIComponent(open.runId);
    const before = await written();
    const cases: Array<[string, string, string | undefined, number]> = [
      ['POST', '/runs', '{"workflow": "echo-any", "input": ', 400],
      ['POST', '/runs', JSON.stringify({ workflow: ['echo-any'], input: 1 }), 400],
      ['POST', '/runs', `{"workflow": "echo-any", "input": ${'{"next":'.repeat(5_000)}"bottom"${'}'.repeat(5_000)}}`, 400],
      ['POST', '/runs', JSON.stringify({ workflow: LONG, input: 1 }), 400],
      ['POST', '/runs', JSON.stringify({ workflow: 'echo-any', input: 'x'.repeat(2_000_000) }), 413],
      ['POST', '/runs', JSON.stringify({ workflow: 'echo-any', input: 1, runId: 12 }), 400],
      ['POST', `/runs/${id}/signals/done`, 'not json', 400],
      ['POST', `/runs/${id}/signals/done`, JSON.stringify([1, 2]), 400],
      ['POST', `/runs/${id}/signals/${LONG}`, JSON.stringify({ payload: 1 }), 400],
      ['POST', `/runs/${encodeURIComponent(SQLISH)}x/signals/done`, JSON.stringify({ payload: 1 }), 404],
      ['POST', `/runs/${id}/channels/c`, JSON.stringify({ key: 5, payload: 1 }), 400],
      ['POST', `/runs/${id}/channels/c`, JSON.stringify({ key: LONG, payload: 1 }), 400],
      ['POST', `/runs/${id}/cancel`, JSON.stringify({ reason: 42 }), 400],
      ['POST', `/runs/${id}/cancel`, JSON.stringify({ reason: 'r'.repeat(1_001) }), 400],
      ['POST', `/runs/${id}/retry`, undefined, 409],
      ['POST', '/bulk/signal', JSON.stringify({ runIds: 'all', name: 'done', payload: 1 }), 400],
      ['POST', '/bulk/resume', JSON.stringify({ runIds: Array.from({ length: 1_001 }, (_, i) => `r${i}`) }), 400],
      ['POST', '/bulk/cancel', JSON.stringify({ filter: { status: { $ne: 1 } } }), 400],
      ['GET', '/runs?limit=-1', undefined, 400],
      ['GET', '/runs?limit=NaN', undefined, 400],
      ['GET', '/runs?cursor=%27%20OR%201=1', undefined, 400],
      ['GET', '/runs?status=waiting,bogus', undefined, 400],
      ['GET', `/runs/${encodeURIComponent(LONG)}`, undefined, 404],
    ];
    for (const [method, path, body, status] of cases) {
      const response = await fetch(`${t.url}/durable/api${path}`, { method, headers: HEADERS, body });
      const json = (await response.json()) as { code?: string; message?: string };
      expect([method, path.slice(0, 60), response.status]).toEqual([method, path.slice(0, 60), status]);
      expect(typeof json.code).toBe('string');
      expect(JSON.stringify(json)).not.toMatch(/\n\s+at |\.ts:\d+|\.js:\d+/);
    }
    expect(await written()).toBe(before);
  });

  it('REST parameters: a NUL byte, a cursor that is no cursor, a repeated scalar, an unknown or bracketed parameter, bad percent-encoding, an unknown path or a wrong method answer 4xx as { code, message } naming the cause, and write nothing', async () => {
    const open = await t.client.start(WaitsForAnything, null);
    await eventually(async () => (await t.client.getRun(open.runId)).status === 'waiting', 'a run to wait');
    const id = encodeURIComponent(open.runId);
    const before = await written();
    // method, path, body, status, code, words the message must contain
    const cases: Array<[string, string, string | undefined, number, string, string?]> = [
      ['GET', '/runs/a%00b', undefined, 400, 'INVALID_ARGUMENT', '"id"'],
      ['POST', '/runs/a%00b/cancel', undefined, 400, 'INVALID_ARGUMENT', '"id"'],
      ['POST', `/runs/${id}/signals/do%00ne`, JSON.stringify({ payload: 1 }), 400, 'INVALID_ARGUMENT', '"name"'],
      ['GET', '/runs?q=a%00b', undefined, 400, 'INVALID_ARGUMENT', '"q"'],
      ['GET', '/runs?workflow=a%00b', undefined, 400, 'INVALID_ARGUMENT', '"workflow"'],
      ['GET', '/runs?signal=a%00b', undefined, 400, 'INVALID_ARGUMENT', '"signal"'],
      ['POST', '/bulk/cancel', JSON.stringify({ filter: { workflow: 'a\u0000b' } }), 400, 'INVALID_ARGUMENT', '"filter.workflow"'],
      ['GET', '/runs?cursor=12345678901234567890', undefined, 400, 'INVALID_ARGUMENT', '"cursor"'],
      ['GET', '/runs?cursor=9999999999999999999', undefined, 400, 'INVALID_ARGUMENT', '"cursor"'],
      ['GET', '/runs?q=a&q=b', undefined, 400, 'INVALID_ARGUMENT', '"q"'],
      ['GET', '/runs?limit=1&limit=2', undefined, 400, 'INVALID_ARGUMENT', '"limit"'],
      ['GET', '/runs?q[a]=1', undefined, 400, 'INVALID_ARGUMENT', '"q[a]"'],
      ['GET', '/runs?status[]=waiting', undefined, 400, 'INVALID_ARGUMENT', '"status[]"'],
      ['GET', '/runs?bogus=1', undefined, 400, 'INVALID_ARGUMENT', '"bogus"'],
      ['GET', '/stats?x=1', undefined, 400, 'INVALID_ARGUMENT', '"x"'],
      ['POST', '/runs', JSON.stringify({ workflow: 'echo-any', input: 1, extra: true }), 400, 'INVALID_ARGUMENT', '"extra"'],
      ['GET', '/runs?q=%E0%A4%A', undefined, 400, 'INVALID_ENCODING'],
      ['GET', '/runs/%E0%A4%A', undefined, 400, 'INVALID_ENCODING'],
      ['POST', '/runs/%ZZ/cancel', undefined, 400, 'INVALID_ENCODING'],
      ['DELETE', '/runs', undefined, 405, 'METHOD_NOT_ALLOWED', 'GET, POST'],
      ['DELETE', `/runs/${id}`, undefined, 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['PUT', '/stats', '{}', 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['GET', '/no-such-route', undefined, 404, 'NOT_FOUND', '/no-such-route'],
      ['POST', '/no-such-route', '{}', 404, 'NOT_FOUND'],
      ['GET', `/runs/${id}/nope`, undefined, 404, 'NOT_FOUND'],
    ];
    const answers = [];
    for (const [method, path, body] of cases) {
      const response = await fetch(`${t.url}/durable/api${path}`, { method, headers: HEADERS, body });
      const json = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
      answers.push([method, path, response.status, json.code, json.message]);
    }
    expect(answers).toEqual(
      cases.map(([method, path, , status, code, words]) => [
        method,
        path,
        status,
        code,
        words ? expect.stringContaining(words) : expect.any(String),
      ]),
    );
    const both = await fetch(`${t.url}/durable/api/runs?status=waiting&status=failed`, { headers: HEADERS });
    expect(both.status).toBe(200);
    expect(await written()).toBe(before);
  });

  it('a run whose workflow was removed from the code blocks no other run; it stays for an instance that knows it', async () => {
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wake_at) VALUES ('orphan', 'removed-workflow', 'pending', 'null', now() - interval '1 minute')`,
    );
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => t.client.start(EchoAny, i)));
    expect(await Promise.all(runs.map((r) => r.result({ timeout: '10s' })))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const [orphan] = await db.query(`SELECT status FROM durable.runs WHERE id = 'orphan'`);
    expect(orphan.status).toBe('pending');
    await expect(t.signals.signal('orphan', 'x', 1)).rejects.toThrow(WorkflowNotFoundError);
  });
});
