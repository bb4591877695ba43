import { DurableWorkflow, Workflow, WorkflowClient } from 'nestjs-durable';
import { dashboardSuite } from '../setup/browser';
import { uniqueSchema } from '../setup/durable-app';

const TOKEN = 'queues-token-0123456789abcdef';

@Workflow('llm-call', { queue: 'llm' })
export class LlmCall implements DurableWorkflow<{ tenant: string }, string> {
  async run(input: { tenant: string }) {
    return input.tenant;
  }
}

describe('the Queues page in a real browser', () => {
  // No worker: the backlog holds still while the page shows it.
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [LlmCall],
    options: {
      worker: { enabled: false },
      queues: { llm: { concurrency: 2, partitionConcurrency: 1, rateLimit: { limit: 60, period: '1m' } } },
    },
  });

  it('shows a backlog with its cause and deepest partitions, and links to the pending runs, each saying why it waits', async () => {
    const { app, page, db } = suite;
    const client = app.get(WorkflowClient);
    for (let i = 0; i < 4; i++) await client.start(LlmCall, { tenant: 'acme' }, { partitionKey: 'acme' });
    await client.start(LlmCall, { tenant: 'globex' }, { partitionKey: 'globex' });
    // One of acme's runs executes (as a worker would have admitted it): acme's partition is full.
    await db.query(
      `UPDATE durable.runs SET status = 'running', began_at = now() WHERE id = (SELECT id FROM durable.runs WHERE partition_key = 'acme' LIMIT 1)`,
    );

    // A run pending in a queue a deploy removed (no instance declares it): said above the declared queues.
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wake_at, queue, priority) VALUES ('stranded-1', 'llm-call', 'pending', '{}', now(), 'retired', 100)`,
    );

    await page.getByTestId('nav-queues').click();
    const card = page.getByTestId('queue-llm');
    await card.waitFor();
    const stranded = page.getByTestId('undeclared-queues').locator('[data-testid=undeclared-queue][data-name=retired]');
    await expect(stranded.innerText()).resolves.toBe('retired: 1 run pending');
    await expect(stranded.locator('a').getAttribute('href')).resolves.toBe('#/runs?waitingFor=queue&queue=retired');
    await db.query(`DELETE FROM durable.runs WHERE id = 'stranded-1'`);
    await expect(card.getByTestId('queue-running').textContent()).resolves.toBe('1 / 2');
    await expect(card.getByTestId('queue-pending').textContent()).resolves.toBe('4');
    await expect(card.getByTestId('queue-rate').textContent()).resolves.toBe('1 / 60');
    await expect(card.getByTestId('queue-causes').innerText()).resolves.toBe(
      '1 waiting for a slot of the queue (concurrency)\n3 waiting for a slot of their partition (partition)',
    );
    await expect(card.getByTestId('queue-partitions').locator('tbody tr').allInnerTexts()).resolves.toEqual(['acme\t1\t3', 'globex\t0\t1']);
    await expect(card.textContent()).resolves.toContain('2 at once · 1 per partition · 60 per 1 min');

    await card.getByTestId('queue-pending').click();
    await page.waitForURL(/#\/runs\?waitingFor=queue&queue=llm/);
    const rows = page.locator('[data-testid=runs-table] tbody tr');
    await rows.nth(3).waitFor();
    await expect(rows.count()).resolves.toBe(4);
    await expect(rows.allInnerTexts()).resolves.toEqual(expect.arrayContaining([expect.stringContaining('queue llm (partition)')]));
    await expect(rows.allInnerTexts()).resolves.toEqual(expect.arrayContaining([expect.stringContaining('queue llm (concurrency)')]));
    // The link's queue filter shows as a filter of its own, and is lifted there.
    await expect(page.getByTestId('filter-queue').inputValue()).resolves.toBe('llm');
    await page.getByTestId('filter-queue').selectOption('');
    await page.waitForURL((url) => url.hash.startsWith('#/runs?waitingFor=queue') && !url.hash.includes('queue=llm'));

    // A run's page names its queue, partition and priority (they stay there once it runs).
    const [{ id }] = await db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE partition_key = 'globex'`);
    await page.goto(`${app.url}/durable/#/runs/${encodeURIComponent(id)}`);
    await expect(page.getByTestId('run-queue').locator('dd').innerText()).resolves.toBe('llm · partition globex · priority 100');
    // Its place in line is in its partition (the queue limits partitions): globex has no run before it.
    await expect(page.locator('header').getByTestId('queue-place').innerText()).resolves.toBe(', next in its partition');
    // The last acme run has the two other acme runs pending before it ahead.
    const [{ id: lastAcme }] = await db.query<{ id: string }>(
      `SELECT id FROM durable.runs WHERE partition_key = 'acme' AND status = 'pending' ORDER BY wake_at DESC, id DESC LIMIT 1`,
    );
    await page.goto(`${app.url}/durable/#/runs/${encodeURIComponent(lastAcme)}`);
    await expect(page.locator('header').getByTestId('queue-place').innerText()).resolves.toBe(', 2 ahead in its partition');

    // The workflow's card names its queue, and leads to the queues page.
    await page.getByTestId('nav-workflows').click();
    const queued = page.locator('[data-testid=workflow][data-name="llm-call"]').getByTestId('workflow-queue');
    await expect(queued.innerText()).resolves.toBe('queue llm');
    await queued.click();
    await card.waitFor();
  });

  it("polls a queue's load every 3 s while live, holds it while paused, and catches up on resume", async () => {
    const { app, page } = suite;
    const client = app.get(WorkflowClient);
    await page.getByTestId('nav-queues').click();
    const pending = page.getByTestId('queue-llm').getByTestId('queue-pending');
    await page.locator('[data-testid=live-status][data-mode=live]').waitFor();
    const shows = (n: number) =>
      page.locator('[data-testid=queue-llm] [data-testid=queue-pending]', { hasText: new RegExp(`^${n}$`) }).waitFor();
    const before = Number(await pending.textContent());
    // No run event tells the page that a queue's load changed: its poll does.
    await client.start(LlmCall, { tenant: 'initech' }, { partitionKey: 'initech' });
    await shows(before + 1);

    await page.getByTestId('live-pause').click();
    await page.locator('[data-testid=live-status][data-mode=paused]').waitFor();
    await client.start(LlmCall, { tenant: 'initech' }, { partitionKey: 'initech' });
    const asked: string[] = [];
    const count = (request: { url(): string }) =>
      void (new URL(request.url()).pathname.endsWith('/durable/api/queues') && asked.push(request.url()));
    page.on('request', count);
    await page.waitForTimeout(7_000); // an absence: two polling intervals (polled, at least two requests)
    page.off('request', count);
    expect(asked).toEqual([]);
    await expect(pending.textContent()).resolves.toBe(String(before + 1));

    await page.getByTestId('live-resume').click();
    await shows(before + 2);
  });
});
