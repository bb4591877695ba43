import { DeadlineExceededError, DurableWorkflow, runDurableMigrations, Workflow, WorkflowContext } from 'nestjs-durable';
import { databaseUrl, Db, startApp, uniqueSchema } from '../setup/durable-app';
import { migratedBefore } from '../setup/migrated-before';

/** Naps an hour; meets its deadline at the nap and says so. */
@Workflow('old-napper')
class OldNapper implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      await ctx.sleep('nap', '1h');
      return 'woke';
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) throw error;
      return 'met its deadline at the nap';
    }
  }
}

describe('runs that began before migration 6 (no began_at then)', () => {
  const schema = uniqueSchema('mb');
  const db = new Db(schema);
  afterAll(async () => {
    await db.dropSchema();
  });

  it('read as begun after migration 24: one given a deadline that passed meets it at its wait, not failed as never begun; a delayed start stays unbegun', async () => {
    // The schema as a version before migration 6 left it, with a run asleep, one executing and one delayed start.
    const pending = await migratedBefore(schema, 'Queues1732900000006');
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wait, wait_kind, wait_name, wake_at)
       VALUES ('old-asleep', 'old-napper', 'waiting', 'null', '{"kind":"sleep","name":"nap"}', 'sleep', 'nap', now() + interval '1 hour'),
              ('old-running', 'old-napper', 'running', 'null', NULL, NULL, NULL, now() + interval '1 hour'),
              ('old-delayed', 'old-napper', 'waiting', 'null', '{"kind":"start"}', 'start', NULL, now() + interval '1 hour')`,
    );

    expect(await runDurableMigrations({ connection: databaseUrl(), schema })).toEqual(pending);
    const began = await db.query(`SELECT id, began_at = created_at AS "fromCreation" FROM durable.runs ORDER BY id`);
    expect(began).toEqual([
      { id: 'old-asleep', fromCreation: true },
      { id: 'old-delayed', fromCreation: null }, // still not begun
      { id: 'old-running', fromCreation: true },
    ]);

    // Only the sleeping run goes on.
    await db.query(`UPDATE durable.runs SET status = 'cancelled', wake_at = NULL, finished_at = now() WHERE id <> 'old-asleep'`);
    const app = await startApp({ schema, providers: [OldNapper], options: { sweeper: { intervalMs: 100 } } });
    try {
      await app.client.setDeadline('old-asleep', new Date(Date.now() - 1_000));
      // Before: the sweeper failed it "… before it began", without its grace; the claim passed over it.
      expect(await app.client.handle('old-asleep').result({ timeout: '10s' })).toBe('met its deadline at the nap');
    } finally {
      await app.close();
    }
  });
});
