import { INestApplicationContext, ModuleMetadata, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { SignalService } from '../client/signal.service';
import { WorkflowClient } from '../client/workflow.client';
import { DURABLE_DATA_SOURCE, DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableModule } from '../durable.module';
import { InvalidArgumentError } from '../errors';
import type { DurableModuleOptions, RunView, WaitReason } from '../interfaces';
import { baseOptions } from '../persistence/durable-database';
import { tablesFor } from '../persistence/tables';
import { DurableWorker } from '../worker/durable.worker';
import { SchedulePass } from '../worker/schedule-pass';
import { DeadlineExpiry } from '../worker/deadline-expiry';
import { ScheduleService } from '../client/schedule.service';
import { DbClock } from '../runtime/db-clock';
import { rateWindowsOf } from '../queues/queue-config';
import { DurableTestClock } from './durable-test-clock';

export interface DurableTestingOptions extends Pick<ModuleMetadata, 'imports' | 'providers'> {
  /** The database; default DATABASE_URL. Every test module gets a fresh schema in it, dropped at close(). */
  connection?: string;
  /** DurableModule options to override (the schema is always the test's own). */
  options?: Partial<Omit<DurableModuleOptions, 'schema' | 'connection'>>;
  /** Where schedules' time starts (default: now): a test of a schedule can begin on any day, past or future. */
  now?: Date;
}

/**
 * Your workflows in a jest test, against a real PostgreSQL: a schema of the test's own, a clock to
 * advance (a 7-day sleep fires in milliseconds), and drain() to run everything due. Waits always park
 * (inlineWaitMs 0) and nothing is swept behind your back, so a test decides when time passes.
 *
 *   const durable = await DurableTestingModule.create({ providers: [Onboarding, Mailer] });
 *   const run = await durable.client.start(Onboarding, { email });
 *   await durable.drain();
 *   expect(await durable.waitReason(run.runId)).toMatchObject({ kind: 'signal', name: 'email-verified' });
 *   await durable.clock.advance('7d');
 *   expect(await run.result()).toBe('gave up');
 *   await durable.close();
 */
export class DurableTestingModule {
  readonly client: WorkflowClient;
  readonly signals: SignalService;
  readonly schedules: ScheduleService;
  readonly clock: DurableTestClock;
  private readonly worker: DurableWorker;
  private readonly schedulePass: SchedulePass;
  private readonly expiry: DeadlineExpiry;

  private constructor(
    readonly app: INestApplicationContext,
    readonly schema: string,
  ) {
    this.client = app.get(WorkflowClient);
    this.signals = app.get(SignalService);
    this.schedules = app.get(ScheduleService);
    this.worker = app.get(DurableWorker);
    this.schedulePass = app.get(SchedulePass);
    this.expiry = app.get(DeadlineExpiry);
    const rateWindows = rateWindowsOf(app.get<ResolvedDurableOptions>(DURABLE_OPTIONS).queues);
    this.clock = new DurableTestClock(
      app.get<DataSource>(DURABLE_DATA_SOURCE),
      tablesFor(schema),
      () => this.drain(),
      app.get(DbClock),
      rateWindows,
    );
  }

  static async create(options: DurableTestingOptions = {}): Promise<DurableTestingModule> {
    const connection = options.connection ?? process.env.DATABASE_URL;
    if (!connection) throw new InvalidArgumentError('DurableTestingModule needs a database: pass `connection` or set DATABASE_URL.');
    const schema = `test_${randomBytes(6).toString('hex')}`;
    let moduleRef: TestingModule | undefined;
    try {
      moduleRef = await Test.createTestingModule({
        imports: [
          DurableModule.forRoot({ inlineWaitMs: 0, sweeper: false, ...options.options, connection, schema }),
          ...(options.imports ?? []),
        ],
        providers: options.providers ?? [],
      }).compile();
      if (options.now) moduleRef.get(DbClock).shiftMs = options.now.getTime() - Date.now();
      const app = await moduleRef.init();
      return new DurableTestingModule(app, schema);
    } catch (error) {
      // A boot that fails (two workflows of one name, a bad option) leaves no schema. (Nest's close of a module whose
      // init failed runs no hook, so the module's pool is left to its idle timeout.)
      await moduleRef?.close().catch(() => undefined);
      await dropSchema(connection, schema).catch(() => undefined);
      throw error;
    }
  }

  get<T>(type: Type<T> | string | symbol): T {
    return this.app.get(type);
  }

  /**
   * Fires the schedules due now, then runs everything due (and what that makes due) and fails the runs
   * whose deadline passed before they began, until nothing is left to do but queued runs their queue's
   * limit holds back (a rate window opens as the clock advances).
   */
  async drain(): Promise<void> {
    await this.schedulePass.run();
    // A run's deadline may pass before it begins while others execute: fail it, then run what that woke (its parent).
    do await this.worker.drain();
    while ((await this.expiry.run()) > 0);
    // A run that ended may release a schedule's buffered slot: look again until a pass starts nothing.
    while ((await this.schedulePass.run()).started) await this.worker.drain();
  }

  /** After a drain: what the run waits for, or undefined when it does not wait. */
  async waitReason(runId: string): Promise<WaitReason | undefined> {
    await this.drain();
    return (await this.client.getRun(runId)).waiting;
  }

  /** After a drain: the run as it stands. */
  async run(runId: string): Promise<RunView> {
    await this.drain();
    return this.client.getRun(runId);
  }

  /** Closes the application and drops the test's schema (also when the close fails, whose error is the one thrown). */
  async close(): Promise<void> {
    const { options } = this.app.get<DataSource>(DURABLE_DATA_SOURCE);
    const closed = await this.app.close().then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    const dropped = dropSchema(options as DurableModuleOptions['connection'], this.schema);
    if (!closed) return dropped;
    await dropped.catch(() => undefined);
    throw closed.error;
  }
}

/** Drops a test's schema on a connection of its own (the module's are closed by then). */
async function dropSchema(connection: DurableModuleOptions['connection'], schema: string): Promise<void> {
  const { DataSource: Source } = await import('typeorm');
  const cleaner = await new Source({ ...baseOptions(connection), entities: [], migrations: [] } as never).initialize();
  try {
    await cleaner.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await cleaner.destroy();
  }
}
