import { HttpAdapterHost } from '@nestjs/core';
import { METHODS } from 'node:http';
import { Breaks, NapLong, operatorWorkflows, ReviewThenClose } from '../fixtures/operator.workflows';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'security-token-0123456789abcdef';

interface Route {
  method: string;
  path: string;
}

/**
 * Every route the application actually serves under the dashboard path, read from Express' router.
 * A route that answers every method (the API's fallback: 404 or 405) is one row, method ANY.
 */
function dashboardRoutes(t: DurableTestApp): Route[] {
  const app = t.app.get(HttpAdapterHost).httpAdapter.getInstance();
  const stack = (app.router ?? app._router).stack as Array<{ route?: { path: string; methods: Record<string, boolean> } }>;
  return stack
    .filter((layer) => layer.route?.path.startsWith('/durable'))
    .flatMap((layer) => {
      const methods = Object.keys(layer.route!.methods).map((method) => method.toUpperCase());
      return (methods.length === METHODS.length ? ['ANY'] : methods).map((method) => ({ method, path: layer.route!.path }));
    });
}

describe('security: every dashboard route, generated from the router', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  let readOnly: DurableTestApp;
  let routes: Route[];
  let open: string;
  let failed: string;

  /** A concrete URL for a route: parameters filled with runs that exist. */
  const url = (base: string, route: Route, runId = open) =>
    base +
    route.path
      .replace(':id', encodeURIComponent(runId))
      .replace(':name', 'approval')
      .replace(':channel', 'events')
      .replace(/\/\*path$/, '/index.html')
      .replace('{*path}', 'no-such-route');
  /** The method to call a route with: DELETE, which no route serves, for the fallback. */
  const method = (route: Route) => (route.method === 'ANY' ? 'DELETE' : route.method);
  const body = (route: Route) =>
    route.path.endsWith('/signals/:name')
      ? { payload: { approved: true, by: 'sec' } }
      : route.path.endsWith('/channels/:channel')
        ? { key: `k-${Math.random()}`, payload: { kind: 'x' } }
        : route.path === '/durable/api/runs'
          ? { workflow: 'nap-long', input: null }
          : route.path === '/durable/api/bulk/signal'
            ? { runIds: [open], name: 'approval', payload: { approved: true, by: 'sec' } }
            : route.path.startsWith('/durable/api/bulk/')
              ? { runIds: [open] }
              : route.path.endsWith('/backfill')
                ? { from: '2001-02-01T00:00:00Z', to: '2001-03-01T00:00:00Z' } // no slot: the action is audited, no run starts
                : route.path.endsWith('/deadline')
                  ? { deadline: null }
                  : route.path.endsWith('/fork')
                    ? { fromStep: 'sleep:cooling-off' }
                    : {};
  const isApi = (route: Route) => route.path.startsWith('/durable/api');
  /**
   * The rows of every table of the schema, once no run is pending or running (the runs earlier tests
   * acted on have settled): "writes nothing" means that none of them changed.
   */
  const everyTable = async () => {
    await eventually(async () => (await db.count('runs', `status IN ('pending', 'running')`)) === 0, 'the runs to settle');
    const tables = await db.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1`, [
      schema,
    ]);
    return Object.fromEntries(await Promise.all(tables.map(async ({ name }) => [name, await db.count(name)] as const)));
  };
  const mutations = () => routes.filter((r) => r.method === 'POST');

  beforeAll(async () => {
    t = await startApp({ schema, providers: operatorWorkflows, listen: true, options: { dashboard: { auth: { token: TOKEN } } } });
    readOnly = await startApp({
      schema,
      providers: operatorWorkflows,
      listen: true,
      options: { dashboard: { auth: { token: TOKEN }, readOnly: true }, worker: { enabled: false } },
    });
    routes = dashboardRoutes(t);
    open = (await t.client.start(ReviewThenClose, null)).runId;
    failed = (await t.client.start(Breaks, null)).runId;
    await eventually(
      async () => (await t.client.getRun(open)).status === 'waiting' && (await t.client.getRun(failed)).status === 'failed',
      'the fixtures',
    );
  });
  afterAll(async () => {
    await Promise.all([t.close(), readOnly.close()]);
    await db.dropSchema();
  });

  it('knows every route (the table below is generated, so a new route is covered the day it is added)', () => {
    expect(routes.length).toBeGreaterThanOrEqual(16);
    expect(mutations().length).toBeGreaterThanOrEqual(9);
  });

  it("without credentials, every API route answers 401 (the session says how to sign in; the UI's files are public)", async () => {
    for (const route of routes) {
      const response = await fetch(url(t.url, route), {
        method: method(route),
        headers: { 'x-durable-request': '1', 'content-type': 'application/json' },
        body: route.method === 'POST' ? JSON.stringify(body(route)) : undefined,
      });
      const expected = !isApi(route) ? 200 : route.path.endsWith('/session') ? 200 : 401;
      expect([route.method, route.path, response.status]).toEqual([route.method, route.path, expected]);
      const wrong = await fetch(url(t.url, route), {
        method: method(route),
        headers: { authorization: 'Bearer wrong-token-of-some-length', 'x-durable-request': '1', 'content-type': 'application/json' },
        body: route.method === 'POST' ? JSON.stringify(body(route)) : undefined,
      });
      expect([route.path, wrong.status]).toEqual([route.path, expected]);
    }
  });

  it('in read-only mode every mutation answers 403 and writes nothing', async () => {
    const before = await everyTable();
    for (const route of mutations()) {
      const response = await fetch(url(readOnly.url, route), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'x-durable-request': '1', 'content-type': 'application/json' },
        body: JSON.stringify(body(route)),
      });
      expect([route.path, response.status, ((await response.json()) as { code: string }).code]).toEqual([route.path, 403, 'READ_ONLY']);
    }
    expect(await everyTable()).toEqual(before);
  });

  it('a mutation without the x-durable-request header is refused with 403 and writes nothing', async () => {
    const before = await everyTable();
    for (const route of mutations()) {
      const response = await fetch(url(t.url, route), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body(route)),
      });
      expect([route.path, response.status, ((await response.json()) as { code: string }).code]).toEqual([
        route.path,
        403,
        'MISSING_HEADER',
      ]);
    }
    expect(await everyTable()).toEqual(before);
  });

  it("a request a browser sends from another site's page, or another host of the site (Sec-Fetch-Site), is refused with 403 on every API route, reads and the event stream too, credentials and header notwithstanding, and writes nothing", async () => {
    const before = await everyTable();
    for (const site of ['cross-site', 'same-site']) {
      for (const route of routes.filter((r) => isApi(r) && r.method !== 'ANY')) {
        const response = await fetch(url(t.url, route), {
          method: route.method,
          // What a browser sends when a page elsewhere calls the API with the user's credentials under a permissive CORS.
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'x-durable-request': '1',
            'content-type': 'application/json',
            'sec-fetch-site': site,
            origin: 'https://elsewhere.example',
          },
          body: route.method === 'POST' ? JSON.stringify(body(route)) : undefined,
        });
        expect([route.method, route.path, response.status, ((await response.json()) as { code: string }).code]).toEqual([
          route.method,
          route.path,
          403,
          'CROSS_SITE',
        ]);
      }
    }
    // The UI's own calls (same-origin) and a typed address or a script (none, or no header) are served.
    for (const site of ['same-origin', 'none'])
      expect(
        (await fetch(`${t.url}/durable/api/runs`, { headers: { authorization: `Bearer ${TOKEN}`, 'sec-fetch-site': site } })).status,
      ).toBe(200);
    expect(await everyTable()).toEqual(before);
  });

  it('each mutation writes an audit row with its actor', async () => {
    for (const route of mutations()) {
      // Each mutation gets a run in the state it acts on.
      const target = route.path.endsWith('/retry')
        ? (await t.client.start(Breaks, null)).runId
        : route.path.endsWith('/fork')
          ? (await t.client.start(NapLong, null)).runId // it has a checkpoint to fork from
          : (await t.client.start(ReviewThenClose, null)).runId;
      await eventually(async () => ['waiting', 'failed'].includes((await t.client.getRun(target)).status), 'the target to settle');
      const since = (await db.query(`SELECT COALESCE(max(id), 0) AS id FROM durable.history`))[0].id;
      const response = await fetch(url(t.url, route, target), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'x-durable-request': '1', 'content-type': 'application/json' },
        body: JSON.stringify(route.path.startsWith('/durable/api/bulk/') ? { ...body(route), runIds: [target] } : body(route)),
      });
      expect([route.path, response.status < 300]).toEqual([route.path, true]);
      const audit = await db.query(`SELECT event, actor FROM durable.history WHERE id > $1 AND actor = 'token'`, [since]);
      expect([route.path, audit.length > 0]).toEqual([route.path, true]);
    }
  });

  it('every API route refuses a parameter it does not declare with 400 naming it, and writes nothing (each has a declared schema)', async () => {
    const before = await everyTable();
    for (const route of routes.filter((r) => isApi(r) && r.method !== 'ANY')) {
      const response = await fetch(`${url(t.url, route)}?undeclared=1`, {
        method: route.method,
        headers: { authorization: `Bearer ${TOKEN}`, 'x-durable-request': '1', 'content-type': 'application/json' },
        body: route.method === 'POST' ? JSON.stringify(body(route)) : undefined,
      });
      const json = (await response.json()) as { code: string; message: string };
      expect([route.method, route.path, response.status, json.code, json.message]).toEqual([
        route.method,
        route.path,
        400,
        'INVALID_ARGUMENT',
        expect.stringContaining('"undeclared"'),
      ]);
    }
    expect(await everyTable()).toEqual(before);
  });

  it("a method a path does not serve answers 405 with Allow, a path no route serves 404, both in the API's error shape", async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'x-durable-request': '1' };
    for (const route of routes.filter(isApi)) {
      const response = await fetch(url(t.url, route), { method: 'DELETE', headers });
      const json = (await response.json()) as { code: string; message: string };
      const expected =
        route.method === 'ANY' ? [404, 'NOT_FOUND', null] : [405, 'METHOD_NOT_ALLOWED', expect.stringContaining(route.method)];
      expect([route.path, response.status, json.code, response.headers.get('allow')]).toEqual([route.path, ...expected]);
      expect(json.message).toEqual(expect.any(String));
    }
  });

  it('a server fault answers 500 with a generic message: no stack trace, no SQL, in the body', async () => {
    await db.query(`ALTER TABLE durable.history RENAME TO history_gone`);
    try {
      const response = await fetch(`${t.url}/durable/api/runs/${encodeURIComponent(open)}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const text = await response.text();
      expect(response.status).toBe(500);
      expect(JSON.parse(text)).toEqual({ code: 'INTERNAL', message: expect.any(String) });
      expect(text).not.toMatch(/history|relation|SELECT|\bat\b.*\.(js|ts)/);
    } finally {
      await db.query(`ALTER TABLE durable.history_gone RENAME TO history`);
    }
  });

  it('the UI is served with the CSP and nosniff; the API never answers HTML', async () => {
    const page = await fetch(`${t.url}/durable/`);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'.*frame-ancestors 'none'/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const api = await fetch(`${t.url}/durable/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(api.headers.get('content-type')).toContain('application/json');
  });
});
