import type { Locator, Page } from 'playwright-core';
import { DurableWorkflow, NonRetryableError, Workflow, WorkflowContext } from 'nestjs-durable';
import { dashboardSuite } from '../setup/browser';
import { DurableTestApp, eventually, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'fork-token-0123456789abcdef';

/** The runs whose 'charge' step ran, in this process: a fork from a later step must not appear here. */
const charged: string[] = [];
/** Closes by order: with `breakClose`, an order's first close fails, so a fork of it closes. */
const closes = new Map<string, number>();

interface OrderInput {
  order: string;
  breakClose?: boolean;
}

/** Charges, reserves, waits for an approval (the signal between steps), then closes. */
@Workflow('fork-order')
export class ForkOrder implements DurableWorkflow<OrderInput, unknown> {
  async run(input: OrderInput, ctx: WorkflowContext) {
    const charge = await ctx.step('charge', () => {
      charged.push(ctx.runId);
      return `charged ${input.order}`;
    });
    const reserve = await ctx.step('reserve', () => `reserved ${input.order}`);
    const approval = await ctx.waitForSignal<string>('approve');
    const close = await ctx.step('close', () => {
      const attempt = (closes.get(input.order) ?? 0) + 1;
      closes.set(input.order, attempt);
      if (input.breakClose && attempt === 1) throw new NonRetryableError('close is broken');
      return `closed ${input.order}`;
    });
    return { charge, reserve, approval, close };
  }
}

@Workflow('fork-label')
export class ForkLabel implements DurableWorkflow<string, string> {
  async run(order: string, ctx: WorkflowContext) {
    return ctx.step('print', () => `label ${order}`);
  }
}

/** Prints its label in a child, then ships: a fork from 'ship' reuses the child. */
@Workflow('fork-parcel')
export class ForkParcel implements DurableWorkflow<string, string> {
  async run(order: string, ctx: WorkflowContext) {
    const label = await (await ctx.startChild(ForkLabel, order, { step: 'label' })).result();
    return ctx.step('ship', () => `shipped with ${label}`);
  }
}

/** A run of `order` waiting for its approval, after charge and reserve. */
async function waitingOrder(t: DurableTestApp, order: string) {
  const run = await t.client.start(ForkOrder, { order, breakClose: true });
  await eventually(async () => (await t.client.getRun(run.runId)).waiting?.kind === 'signal', `${run.runId} to wait for its approval`);
  return run;
}

/** A run of `order` that charged, reserved, was approved, and failed at close. */
async function failedOrder(t: DurableTestApp, order: string): Promise<string> {
  const run = await waitingOrder(t, order);
  await t.signals.signal(run.runId, 'approve', 'yes');
  await expect(run.result({ timeout: '10s' })).rejects.toThrow(/close is broken/);
  return run.runId;
}

const runUrl = (t: DurableTestApp, runId: string) => `${t.url}/durable/#/runs/${encodeURIComponent(runId)}`;

/** The step keys a list of the confirmation shows, in order. */
const keysIn = (list: Locator) => list.getByTestId('fork-step').evaluateAll((items) => items.map((item) => item.getAttribute('data-key')));

describe('rerun from a step (fork) on the dashboard, in a real browser', () => {
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [ForkOrder, ForkParcel, ForkLabel],
    options: { inlineWaitMs: 0, appVersion: '9.9.9' },
  });
  const { db } = suite;
  let t: DurableTestApp;
  let page: Page;
  beforeAll(() => {
    t = suite.app;
    page = suite.page;
  });

  const openRun = async (runId: string, tab?: string) => {
    await page.goto(`${runUrl(t, runId)}${tab ? `?tab=${tab}` : ''}`);
    await page.locator('[data-testid=run-id]', { hasText: runId }).waitFor();
  };
  /** Opens the confirmation of a fork of `runId` from `step`, from its journal tab. */
  const rerunFrom = async (runId: string, step: string) => {
    await openRun(runId, 'journal');
    await page.locator(`[data-testid=journal-step][data-key="${step}"]`).getByTestId('step-fork').click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('fork-again').waitFor();
    return dialog;
  };
  const copied = (dialog: Locator, signal: string) =>
    dialog.locator(`[data-testid=fork-signal][data-name="${signal}"]`).getAttribute('data-copied');
  const forkOf = (source: string) =>
    eventually(async () => (await db.query(`SELECT id FROM durable.runs WHERE forked_from = $1`, [source]))[0]?.id as string, 'the fork');
  const completed = (runId: string) =>
    eventually(async () => {
      const run = await t.client.getRun(runId);
      return run.status === 'completed' && run;
    }, `${runId} to complete`);

  it("'Rerun from here' on the failed step lists it as running again, the steps before it as kept and the signal as copied, then opens the fork, which does not charge again", async () => {
    const source = await failedOrder(t, 'A-1');
    const dialog = await rerunFrom(source, 'close');
    await expect(keysIn(dialog.getByTestId('fork-again'))).resolves.toEqual(['close']);
    await expect(keysIn(dialog.getByTestId('fork-kept'))).resolves.toEqual(['charge', 'reserve']);
    await expect(copied(dialog, 'approve')).resolves.toBe('true');

    await dialog.getByTestId('confirm').click();
    const fork = await forkOf(source);
    await page.waitForURL((url) => url.hash === `#/runs/${encodeURIComponent(fork)}`);
    await page.locator('[data-testid=run-id]', { hasText: fork }).waitFor();
    const link = page.getByTestId('run-forked-from').locator('a');
    await expect(link.innerText()).resolves.toBe(source);

    expect((await completed(fork)).output).toEqual({
      charge: 'charged A-1',
      reserve: 'reserved A-1',
      approval: 'yes',
      close: 'closed A-1',
    });
    expect(charged.filter((runId) => runId === fork)).toEqual([]);
    expect(charged.filter((runId) => runId === source)).toEqual([source]);

    await link.click();
    await page.locator('[data-testid=run-id]', { hasText: source }).waitFor();
    await expect(page.getByTestId('run-status').innerText()).resolves.toBe('failed');
  });

  it("from a step before the signal, 'before' leaves the signal out and 'all' copies it; the fork gets what was chosen", async () => {
    const source = await failedOrder(t, 'A-2');
    const dialog = await rerunFrom(source, 'reserve');
    await expect(keysIn(dialog.getByTestId('fork-again'))).resolves.toEqual(['reserve', 'close']);
    await expect(keysIn(dialog.getByTestId('fork-kept'))).resolves.toEqual(['charge']);
    await expect(copied(dialog, 'approve')).resolves.toBe('false');

    await dialog.getByTestId('fork-signals').selectOption('all');
    await expect(copied(dialog, 'approve')).resolves.toBe('true');
    await dialog.getByTestId('confirm').click();
    const fork = await forkOf(source);
    await page.locator('[data-testid=run-id]', { hasText: fork }).waitFor();
    // The approval was copied: the fork does not wait for it again.
    expect((await completed(fork)).output).toMatchObject({ approval: 'yes', close: 'closed A-2' });
    expect(charged.filter((runId) => runId === fork)).toEqual([]);
  });

  it("shows the server's refusal in the confirmation when the step is gone (400)", async () => {
    const source = await failedOrder(t, 'A-3');
    const dialog = await rerunFrom(source, 'close');
    await db.query(`DELETE FROM durable.steps WHERE run_id = $1 AND key = 'close'`, [source]);
    await dialog.getByTestId('confirm').click();
    const error = await dialog.getByTestId('confirm-error').innerText();
    expect(error).toContain('INVALID_ARGUMENT');
    expect(error).toContain(`Run "${source}" has no checkpoint "close" to fork from`);
    await expect(db.count('runs', 'forked_from = $1', [source])).resolves.toBe(0);
  });

  it('the source lists its forks in its header and history; the fork says in its history what it copied', async () => {
    const source = await failedOrder(t, 'A-4');
    const fork = await t.client.fork(source, { fromStep: 'close' });
    await openRun(source, 'history');
    await expect(page.getByTestId('run-forks').locator('a').first().innerText()).resolves.toBe(fork.runId);
    // Its forks listed in the runs list, under a filter of their own, which can be lifted.
    await page.getByTestId('run-forks-list').click();
    await page.waitForURL((url) => url.hash.includes(`forkedFrom=${encodeURIComponent(source)}`));
    await expect(page.getByTestId('filter-forked-from').locator('a').first().innerText()).resolves.toBe(source);
    const rows = page.getByTestId('run-row');
    await rows.first().waitFor();
    await expect(rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-run-id')))).resolves.toEqual([fork.runId]);
    await page.getByTestId('filter-forked-from-clear').click();
    await page.waitForURL((url) => !url.hash.includes('forkedFrom'));
    await page.getByTestId('filter-forked-from').waitFor({ state: 'detached' });
    await openRun(source, 'history');
    const forked = page.locator('[data-testid=history-row][data-event=forked]').getByTestId('fork-link');
    await expect(forked.innerText()).resolves.toBe(`as ${fork.runId}, from close`);

    await forked.locator('a').click();
    await page.locator('[data-testid=run-id]', { hasText: fork.runId }).waitFor();
    await page.getByTestId('tab-history').click();
    const forkedFrom = page.locator('[data-testid=history-row][data-event=forked-from]').getByTestId('fork-link');
    await expect(forkedFrom.innerText()).resolves.toBe(`from ${source} at close, signals before: 2 steps, 1 signal and 0 messages copied`);
    await fork.result({ timeout: '10s' });
  });

  it("lists the child a fork reuses in the fork's children tab, linking the source that started it", async () => {
    const source = await t.client.start(ForkParcel, 'P-1');
    await source.result({ timeout: '10s' });
    const fork = await t.client.fork(source.runId, { fromStep: 'ship' });
    await fork.result({ timeout: '10s' });
    await openRun(fork.runId, 'children');
    const row = page.locator(`[data-testid=child-row][data-run-id="${source.runId}/label"]`);
    await expect(row.getByTestId('child-reused').innerText()).resolves.toBe(`reused from ${source.runId}`);
    await row.getByTestId('child-reused').locator('a').click();
    await page.locator('[data-testid=run-id]', { hasText: source.runId }).waitFor();
  });

  it("shows the run's application version in its header", async () => {
    const run = await waitingOrder(t, 'A-5');
    await openRun(run.runId);
    await expect(page.getByTestId('run-app-version').innerText()).resolves.toBe('v9.9.9');
    await t.client.cancel(run.runId);
  });

  it('a run whose journal no longer fits the code shows the warning, its keys and what to do', async () => {
    const run = await waitingOrder(t, 'A-6');
    const warning = {
      code: 'UNREACHED_CHECKPOINTS',
      message: 'The code parked again without reaching 2 checkpoint(s) an earlier execution recorded (ship, bill).',
      keys: ['ship', 'bill'],
      at: new Date().toISOString(),
    };
    await db.query(`UPDATE durable.runs SET warning = $2 WHERE id = $1`, [run.runId, JSON.stringify(warning)]);
    await openRun(run.runId);
    const banner = page.getByTestId('run-warning');
    await expect(banner.getByTestId('run-warning-message').innerText()).resolves.toBe(warning.message);
    await expect(banner.getByTestId('run-warning-key').allInnerTexts()).resolves.toEqual(['ship', 'bill']);
    await expect(banner.innerText()).resolves.toContain('docs/guides/versioning.md');
    await t.client.cancel(run.runId);
  });
});

describe('rerun from a step on a read-only dashboard', () => {
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [ForkOrder],
    options: { inlineWaitMs: 0, dashboard: { auth: { token: TOKEN }, readOnly: true } },
  });

  it("offers no 'Rerun from here'", async () => {
    const { app, page } = suite;
    const run = await waitingOrder(app, 'R-1');
    await page.goto(`${runUrl(app, run.runId)}?tab=journal`);
    await page.locator('[data-testid=journal-step][data-key=reserve]').waitFor();
    await expect(page.getByTestId('step-fork').count()).resolves.toBe(0);
    await app.client.cancel(run.runId);
  });
});
