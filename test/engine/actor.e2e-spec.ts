import { DurableWorkflow, ScheduledInput, ScheduleService, Workflow, WorkflowContext } from 'nestjs-durable';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';

/** Waits for a note; its schedule's slots are a year apart, so its runs here are triggers. */
@Workflow('noted', { schedules: [{ name: 'noted-yearly', cron: '0 3 1 1 *', overlap: 'allow' }] })
class Noted implements DurableWorkflow<ScheduledInput | null, string> {
  async run(_: ScheduledInput | null, ctx: WorkflowContext) {
    return ctx.waitForSignal<string>('note');
  }
}

describe('the actor an action records', () => {
  const schema = uniqueSchema('act');
  const db = new Db(schema);
  let t: DurableTestApp;
  beforeAll(async () => {
    t = await startApp({ schema, providers: [Noted] });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });
  const actorOf = async (runId: string, event: string) =>
    (await db.query<{ actor: string }>(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = $2`, [runId, event]))[0]?.actor;

  it('is storable text of at most 200 characters, whichever service records it (start, signal, trigger)', async () => {
    const long = 'o'.repeat(300);
    const started = await t.client.start(Noted, null, { actor: long });
    expect(await actorOf(started.runId, 'started')).toBe(long.slice(0, 200));
    // Postgres text holds no NUL: shown as \0, where a raw one failed the delivery's statement.
    await t.signals.signal(started.runId, 'note', 'hello', { actor: 'ops\u0000desk' });
    expect(await actorOf(started.runId, 'signal-delivered')).toBe('ops\\0desk');
    const triggered = await t.get(ScheduleService).trigger('noted-yearly', { actor: `ops\u0000${long}` });
    expect(await actorOf(triggered.runId, 'started')).toBe(`ops\\0${long}`.slice(0, 200));
  });
});
