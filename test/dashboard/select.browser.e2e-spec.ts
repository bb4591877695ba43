import { DurableWorkflow, Workflow, WorkflowClient, WorkflowContext } from 'nestjs-durable';
import { dashboardSuite } from '../setup/browser';
import { eventually, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'select-token-0123456789abcdef';

@Workflow('choose')
export class Choose implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.select(
      'decision',
      { approved: ctx.signal('approval'), shipped: ctx.message('carrier'), reminder: ctx.timer('2h') },
      { deadline: '3d' },
    );
  }
}

describe('a parked select in a real browser', () => {
  const suite = dashboardSuite({ schema: uniqueSchema(), token: TOKEN, providers: [Choose], options: { inlineWaitMs: 0 } });

  it('the runs list and the run page list every arm of the select and its deadline', async () => {
    const { app, page } = suite;
    const client = app.get(WorkflowClient);
    const run = await client.start(Choose, null);
    await eventually(async () => (await client.getRun(run.runId)).waiting?.kind === 'select', 'the run parked on its select');

    await page.goto(`${app.url}/durable/#/runs?waitingFor=select`);
    const row = page.locator('[data-testid=runs-table] tbody tr').first();
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain('select decision: approved (signal approval), shipped (channel carrier), reminder until');
    expect(text).toMatch(/, deadline in 2 d/); // 3 days less the moments since: the span is floored

    await page.goto(`${app.url}/durable/#/runs/${encodeURIComponent(run.runId)}`);
    const arms = page.getByTestId('select-arms');
    await arms.waitFor();
    await expect(arms.innerText()).resolves.toMatch(
      // An hour ahead: a time, with its date when that hour falls on another day (a run near midnight).
      /^: approved \(signal approval\), shipped \(channel carrier\), reminder until ([A-Z][a-z]{2} \d{1,2}, )?\d\d:\d\d/,
    );
  });

  it("a select's signal and channel arms are what the run awaits: the forms default to them, the Signals tab marks them, the signal filter finds the run", async () => {
    const { app, page } = suite;
    const client = app.get(WorkflowClient);
    const run = await client.start(Choose, null);
    await eventually(async () => (await client.getRun(run.runId)).waiting?.kind === 'select', 'the run parked on its select');

    await page.goto(`${app.url}/durable/#/runs/${encodeURIComponent(run.runId)}`);
    await page.getByTestId('select-arms').waitFor();
    // Before: no signal was awaited (the name field empty) and the channel form opened on none.
    await expect(page.getByTestId('signal-name').inputValue()).resolves.toBe('approval');
    await expect(page.getByTestId('message-channel').inputValue()).resolves.toBe('carrier');
    await page.getByTestId('tab-signals').click();
    await page.locator('[data-testid=pending-signal][data-name=approval] [data-testid=awaited]').waitFor();

    await page.goto(`${app.url}/durable/#/runs?signal=approval`);
    await page.locator(`[data-testid=run-row][data-run-id="${run.runId}"]`).waitFor();
    await page.goto(`${app.url}/durable/#/runs?signal=carrier`); // a channel arm too, as "Signal or channel" says
    await page.locator(`[data-testid=run-row][data-run-id="${run.runId}"]`).waitFor();
  });
});
