import type { Page } from 'playwright-core';
import { DurableWorkflow, RunHandle, Workflow, WorkflowContext } from 'nestjs-durable';
import { dashboardSuite } from '../setup/browser';
import { DurableTestApp, eventually, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'keys-token-0123456789abcdef';

@Workflow('await-go-keyed')
export class AwaitGo implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal('go');
  }
}

/** Two runs of customer c-9 (one of them order A-17) and one without keys, each waiting for "go". */
async function startRuns(t: DurableTestApp) {
  const start = async (runId: string, keys?: Record<string, string>) => {
    const run = await t.client.start(AwaitGo, null, { runId, keys });
    await eventually(async () => (await t.client.getRun(runId)).waiting?.kind === 'signal', `${runId} to wait for its signal`);
    return run;
  };
  return {
    customer: await start('keyed-customer', { customer: 'c-9' }),
    order: await start('keyed-order', { customer: 'c-9', orderId: 'A-17' }),
    plain: await start('plain'),
  };
}

describe('business keys on the dashboard, in a real browser', () => {
  const suite = dashboardSuite({ schema: uniqueSchema(), token: TOKEN, providers: [AwaitGo], options: { inlineWaitMs: 0 } });
  const { db } = suite;
  let t: DurableTestApp;
  let page: Page;
  let runs: Record<'customer' | 'order' | 'plain', RunHandle<unknown>>;
  beforeAll(async () => {
    t = suite.app;
    page = suite.page;
    runs = await startRuns(t);
  });

  const runsUrl = (query = '') => `${t.url}/durable/#/runs${query}`;
  const rowIds = () => page.getByTestId('run-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')).sort());
  const expectRows = (ids: string[]) =>
    eventually(async () => JSON.stringify(await rowIds()) === JSON.stringify([...ids].sort()), `rows ${ids}`);
  const search = async (text: string) => {
    await page.getByTestId('filter-q').fill(text);
    await page.getByTestId('filter-q').press('Enter');
  };
  const signalsTo = (runId: string) => db.count('signals', 'run_id = $1', [runId]);

  it('a name:value search lists the runs having that key; several terms must all match; a word is still an id prefix', async () => {
    await page.goto(runsUrl());
    await expectRows(['keyed-customer', 'keyed-order', 'plain']);

    await search('customer:c-9');
    await expectRows(['keyed-customer', 'keyed-order']);
    expect(new URL(page.url()).hash).toBe('#/runs?q=customer%3Ac-9');

    await search('customer:c-9 orderId:A-17');
    await expectRows(['keyed-order']);

    await search('customer:c-9 keyed-c');
    await expectRows(['keyed-customer']);
  });

  it("an invalid key term shows the server's refusal, naming the key", async () => {
    await page.goto(runsUrl());
    await search('9x:1');
    const error = await page.getByTestId('runs-error').innerText();
    expect(error).toContain('INVALID_ARGUMENT');
    expect(error).toContain('the key name "9x" must be a letter');
  });

  it("a run's page shows its keys as chips, and a chip lists the runs having that key", async () => {
    await page.goto(`${t.url}/durable/#/runs/keyed-order`);
    const chips = page.getByTestId('run-keys').getByTestId('key-chip');
    await chips.first().waitFor();
    await expect(chips.allInnerTexts()).resolves.toEqual(['customer: c-9', 'orderId: A-17']);

    await chips.filter({ hasText: 'orderId' }).click();
    await expectRows(['keyed-order']);
    await expect(page.getByTestId('filter-q').inputValue()).resolves.toBe('orderId:A-17');
    expect(new URL(page.url()).hash).toBe('#/runs?status=all&q=orderId%3AA-17');

    await page.goto(`${t.url}/durable/#/runs/plain`);
    await page.locator('[data-testid=run-id]', { hasText: 'plain' }).waitFor();
    await expect(page.getByTestId('run-keys').count()).resolves.toBe(0);
  });

  it('the Keys column, turned on in the Columns menu, lists each run its keys, and stays on after a reload', async () => {
    await page.goto(runsUrl());
    await expectRows(['keyed-customer', 'keyed-order', 'plain']);
    await expect(page.getByTestId('keys-cell').count()).resolves.toBe(0);

    await page.getByTestId('columns-menu').click();
    await page.getByTestId('column-keys').check();
    const cell = (runId: string) => page.locator(`[data-testid=run-row][data-run-id="${runId}"]`).getByTestId('keys-cell');
    await expect(cell('keyed-order').getByTestId('key-chip').allInnerTexts()).resolves.toEqual(['customer: c-9', 'orderId: A-17']);
    await expect(cell('keyed-customer').innerText()).resolves.toBe('customer: c-9');
    await expect(cell('plain').innerText()).resolves.toBe('—');

    await page.reload();
    await expect(cell('keyed-customer').innerText()).resolves.toBe('customer: c-9');
  });

  it('"signal every run with this key" previews the matched runs before sending, then each of them gets the signal', async () => {
    await page.goto(runsUrl('?q=customer%3Ac-9'));
    await expectRows(['keyed-customer', 'keyed-order']);
    await page.getByTestId('bulk-signal-keys').click();

    const preview = page.getByTestId('bulk-targets');
    await expect(preview.getByTestId('bulk-target-count').innerText()).resolves.toMatch(/^2 runs match/);
    const previewed = await preview
      .getByTestId('bulk-target')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')).sort());
    expect(previewed).toEqual(['keyed-customer', 'keyed-order']);
    for (const run of Object.values(runs)) expect(await signalsTo(run.runId)).toBe(0);

    await expect(page.getByTestId('signal-name').inputValue()).resolves.toBe('go'); // what the matched runs await
    await page.getByTestId('signal-payload').fill('{ "by": "operator" }');
    await page.getByTestId('confirm-count').fill('2'); // a delivery by filter: the operator confirms the count
    await page.getByTestId('confirm').click();

    await page.getByTestId('bulk-results').waitFor();
    const outcomes = await page
      .getByTestId('bulk-result')
      .evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-run-id')} ${row.getAttribute('data-outcome')}`).sort());
    expect(outcomes).toEqual(['keyed-customer accepted', 'keyed-order accepted']);
    await expect(runs.customer.result({ timeout: '10s' })).resolves.toEqual({ by: 'operator' });
    await expect(runs.order.result({ timeout: '10s' })).resolves.toEqual({ by: 'operator' });
    expect(await signalsTo('plain')).toBe(0);
    await expect(t.client.getRun('plain')).resolves.toMatchObject({ status: 'waiting' });
  });
});

describe('business keys on a read-only dashboard', () => {
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [AwaitGo],
    options: { inlineWaitMs: 0, dashboard: { auth: { token: TOKEN }, readOnly: true } },
  });

  it('searches by key but offers no bulk signal', async () => {
    const { app, page } = suite;
    await startRuns(app);
    await page.goto(`${app.url}/durable/#/runs?q=customer%3Ac-9`);
    await page.locator('[data-testid=run-row][data-run-id="keyed-order"]').waitFor();
    await expect(page.getByTestId('run-row').count()).resolves.toBe(2);
    await expect(page.getByTestId('bulk-signal-keys').count()).resolves.toBe(0);
  });
});
