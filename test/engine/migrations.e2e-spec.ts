import { Injectable, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  DurableModule,
  DurableModuleOptions,
  DURABLE_MIGRATIONS,
  DurableWorkflow,
  dropEmptiedJournal,
  durableEntities,
  InvalidArgumentError,
  RetentionService,
  runDurableMigrations,
  Step,
  Workflow,
} from 'nestjs-durable';
import { DURABLE_OPTIONS } from 'nestjs-durable/durable.constants';
import type { ResolvedDurableOptions } from 'nestjs-durable/durable-options';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { databaseUrl, Db, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { exited, spawnTs } from '../setup/processes';
import { First, Second } from '../fixtures/same-name.workflows';

@Injectable({ scope: Scope.REQUEST })
class PerRequestMailer {
  @Step()
  async send() {
    return 'sent';
  }
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientMailer {
  @Step()
  async send() {
    return 'sent';
  }
}

@Injectable({ scope: Scope.REQUEST }) // above @Workflow, whose own @Injectable() would reset the scope
@Workflow('per-request')
class PerRequestWorkflow implements DurableWorkflow<null, number> {
  async run() {
    return 1;
  }
}

describe('migrations and boot', () => {
  const schemas: string[] = [];
  const fresh = () => {
    const schema = uniqueSchema('m');
    schemas.push(schema);
    return schema;
  };
  afterAll(async () => {
    for (const schema of schemas) await new Db(schema).dropSchema();
  });

  it('five instances booting at once on an empty database run each migration exactly once', async () => {
    const schema = fresh();
    const apps = await Promise.all(Array.from({ length: 5 }, () => startApp({ schema })));
    await Promise.all(apps.map((a) => a.close()));
    const db = new Db(schema);
    expect(await db.query(`SELECT name FROM durable.migrations ORDER BY id`)).toEqual([
      { name: 'InitialSchema1732900000000' },
      { name: 'Operations1732900000001' },
      { name: 'Stats1732900000002' },
      { name: 'WaitKinds1732900000003' },
      { name: 'DelayedStart1732900000004' },
      { name: 'Schedules1732900000005' },
      { name: 'Queues1732900000006' },
      { name: 'Select1732900000007' },
      { name: 'RunDeadlines1732900000008' },
      { name: 'BusinessKeys1732900000009' },
      { name: 'ForkAndVersions1732900000010' },
      { name: 'TimeRanges1732900000011' },
      { name: 'QueueSlots1732900000012' },
      { name: 'PartitionedJournal1732900000013' },
      { name: 'QueueSlotBatches1732900000014' },
      { name: 'BatchedJournalReads1732900000015' },
      { name: 'RunStatistics1732900000016' },
      { name: 'QueueSlotHolders1732900000017' },
      { name: 'ListedStatus1732900000018' },
      { name: 'UnkeyedPending1732900000019' },
      { name: 'KeyFormat1732900000020' },
      { name: 'JournalPartitionVacuum1732900000021' },
      { name: 'RetentionByStatus1732900000022' },
      { name: 'UnbegunDeadline1732900000023' },
      { name: 'BeganBeforeQueues1732900000024' },
      { name: 'BegunPendingDeadline1732900000025' },
    ]);
    await db.dropSchema();
  });

  it('the entities describe exactly the schema the migrations build', async () => {
    const schema = fresh();
    expect(await runDurableMigrations({ connection: databaseUrl(), schema })).toEqual([
      'InitialSchema1732900000000',
      'Operations1732900000001',
      'Stats1732900000002',
      'WaitKinds1732900000003',
      'DelayedStart1732900000004',
      'Schedules1732900000005',
      'Queues1732900000006',
      'Select1732900000007',
      'RunDeadlines1732900000008',
      'BusinessKeys1732900000009',
      'ForkAndVersions1732900000010',
      'TimeRanges1732900000011',
      'QueueSlots1732900000012',
      'PartitionedJournal1732900000013',
      'QueueSlotBatches1732900000014',
      'BatchedJournalReads1732900000015',
      'RunStatistics1732900000016',
      'QueueSlotHolders1732900000017',
      'ListedStatus1732900000018',
      'UnkeyedPending1732900000019',
      'KeyFormat1732900000020',
      'JournalPartitionVacuum1732900000021',
      'RetentionByStatus1732900000022',
      'UnbegunDeadline1732900000023',
      'BeganBeforeQueues1732900000024',
      'BegunPendingDeadline1732900000025',
    ]);
    expect(await runDurableMigrations({ connection: databaseUrl(), schema })).toEqual([]);
    const dataSource = await new DataSource({
      type: 'postgres',
      url: databaseUrl(),
      schema,
      entities: durableEntities(schema),
    }).initialize();
    try {
      const pending = await dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('with migrationsRun: false the module boots on a schema migrated beforehand (by a script)', async () => {
    const schema = fresh();
    await runDurableMigrations({ connection: databaseUrl(), schema });
    const app = await startApp({ schema, options: { migrationsRun: false } });
    await app.close();
  });

  it('migrationsRun: false migrates nothing: on a schema left unmigrated the boot fails naming the migrations, and no table was created', async () => {
    const schema = fresh();
    const db = new Db(schema);
    await db.query(`CREATE SCHEMA "${schema}"`);
    // Its boot fails saying what to do (the operator's cue to migrate), having created nothing.
    await expect(startApp({ schema, options: { migrationsRun: false } })).rejects.toThrow(
      `The schema "${schema}" lacks ${DURABLE_MIGRATIONS.length} of the ${DURABLE_MIGRATIONS.length} migrations this version of nestjs-durable needs (InitialSchema1732900000000, `,
    );
    const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1`, [
      schema,
    ]);
    expect(n).toBe(0);
    await db.dropSchema();
  });

  it('migrationsRun: false on a schema a migration behind (a deploy ahead of its pipeline) fails the boot naming the one missing', async () => {
    const schema = fresh();
    const db = new Db(schema);
    await runDurableMigrations({ connection: databaseUrl(), schema });
    const last = new DURABLE_MIGRATIONS[DURABLE_MIGRATIONS.length - 1]().name;
    await db.query(`DELETE FROM "${schema}".migrations WHERE name = $1`, [last]);
    await expect(startApp({ schema, options: { migrationsRun: false } })).rejects.toThrow(
      `lacks 1 of the ${DURABLE_MIGRATIONS.length} migrations this version of nestjs-durable needs (${last}), and migrationsRun is false`,
    );
    await db.dropSchema();
  });

  it('an application whose database user may not create tables boots and writes: its days are made and its runs table analyzed with the migrating role; the emptied days are left to that role, saying so', async () => {
    const schema = fresh();
    const db = new Db(schema);
    await runDurableMigrations({ connection: databaseUrl(), schema });
    const role = `durable_app_${schema}`;
    await db.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-password'`);
    try {
      await db.query(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
      await db.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA "${schema}" TO ${role}`);
      // The days ahead go: the boot must make them again, with no right to create a table.
      const ahead = await db.query<{ parent: string; name: string }>(
        `SELECT p.relname AS parent, c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
         WHERE c.relkind = 'r' AND p.relnamespace = $1::regnamespace AND c.relname ~ '_d[0-9]{8}$'
           AND c.relname > p.relname || '_d' || to_char(timezone('UTC', now()), 'YYYYMMDD')`,
        [schema],
      );
      expect(ahead).toHaveLength(8);
      for (const { parent, name } of ahead)
        await db.query(`ALTER TABLE durable.${parent} DETACH PARTITION durable.${name}; DROP TABLE durable.${name}`);
      const url = new URL(databaseUrl());
      [url.username, url.password] = [role, 'app-password'];
      const app = await startApp({
        schema,
        providers: [First],
        options: { connection: url.toString(), migrationsRun: false, retention: { completed: '1d', intervalMs: 3_600_000 } },
      });
      try {
        const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhrelid = ANY($1::regclass[])`, [
          ahead.map((p) => `"${schema}".${p.name}`),
        ]);
        expect(n).toBe(8);
        const run = await app.client.start(First, null);
        expect(await run.result({ timeout: '5s' })).toBe(1);
        await expect(app.get(RetentionService).cleanup()).rejects.toThrow(
          `cannot be dropped by the database user "${role}", which does not own its tables`,
        );
        // The runs table's statistics are gathered with the migrating role's rights too (ANALYZE needs its owner).
        await db.query(
          `INSERT INTO durable.runs (id, workflow, status, input) SELECT 'seeded-' || g, 'same-name', 'completed', 'null' FROM generate_series(1, 1500) g`,
        );
        await eventually(
          async () => (await db.query<{ n: number }>(`SELECT pg_stat_get_analyze_count('durable.runs'::regclass)::int AS n`))[0].n >= 1,
          'the instance to analyze the runs table',
          20_000,
        );
      } finally {
        await app.close();
      }
      // The role that migrated drops them: here the (empty) days from before the journal was partitioned.
      expect(await dropEmptiedJournal({ connection: databaseUrl(), schema })).toEqual(['1970-01-01']);
    } finally {
      await db.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
      await db.dropSchema();
    }
  });

  it("the module's own connections carry its statement and idle-in-transaction timeouts and never JIT-compile", async () => {
    const schema = fresh();
    const app = await startApp({ schema, options: { statementTimeoutMs: 12_000, idleInTransactionTimeoutMs: 34_000 } });
    try {
      const [settings] = await app
        .get(DurableDatabase)
        .query(
          `SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('jit') AS jit`,
        );
      expect(settings).toEqual({ statement: '12s', idle: '34s', jit: 'off' });
    } finally {
      await app.close();
    }
  });

  it("a transaction of the module's own left idle (its process stalled) ends after a lease, and so do its row locks", async () => {
    const schema = fresh();
    const app = await startApp({ schema, options: { leaseMs: 1_000, worker: { enabled: false }, sweeper: false } });
    const stalled = await app.get(DurableDatabase).pool.connect();
    const other = new Db(schema);
    try {
      await stalled.query('BEGIN');
      await stalled.query(`SELECT 1 FROM "${schema}".migrations FOR UPDATE`);
      await expect(other.query(`SELECT 1 FROM durable.migrations FOR UPDATE NOWAIT`)).rejects.toThrow(/could not obtain lock/);
      await eventually(
        async () =>
          await other
            .query(`SELECT 1 FROM durable.migrations FOR UPDATE NOWAIT`)
            .then(() => true)
            .catch(() => false),
        'the idle transaction to be ended and its lock freed',
        10_000,
      );
      await expect(stalled.query('SELECT 1')).rejects.toThrow(/idle-in-transaction timeout|terminat|Connection/i);
    } finally {
      stalled.release(true);
      await other.dropSchema();
      await app.close();
    }
  });

  it("connection options from an application's own tests (dropSchema, synchronize) never drop or change the durable schema; settings in extra reach the migrations too", async () => {
    const schema = fresh();
    await (await startApp({ schema })).close();
    const db = new Db(schema);
    await db.query(`INSERT INTO durable.runs (id, workflow, status, input) VALUES ('kept', 'any', 'completed', 'null')`);
    // The URL leads nowhere: the database is in extra, as pg reads it (extra.ssl and extra.host, for a socket, alike).
    const connection = {
      type: 'postgres',
      url: 'postgres://nobody@127.0.0.1:1/nowhere',
      extra: { connectionString: databaseUrl() },
    } as const;
    await (await startApp({ schema, options: { connection: { ...connection, dropSchema: true, synchronize: true } } })).close();
    expect(await db.count('runs', `id = 'kept'`)).toBe(1);
    await db.dropSchema();
    // Its timeouts are for its own statements, not for a migration's (or for the wait on another instance's lock).
    for (const timeout of [{ statement_timeout: 1 }, { options: '-c statement_timeout=1' }])
      await runDurableMigrations({ connection: { ...connection, extra: { ...connection.extra, ...timeout } }, schema: fresh() });
  });

  it('invalid options fail at forRoot with a message that says how to fix them', () => {
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), schema: 'Robert"); DROP' })).toThrow(InvalidArgumentError);
    // Its wake channel (nestjs_durable_<schema>) must fit in Postgres' 63 bytes.
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), schema: 'a'.repeat(49) })).toThrow(/at most 48/);
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), schema: 'a'.repeat(48) })).not.toThrow();
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), worker: { concurrency: 0 } })).toThrow(
      /worker.concurrency must be a whole number from 1/,
    );
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), leaseMs: 10 })).toThrow(/leaseMs/);
    expect(() => DurableModule.forRoot({} as never)).toThrow(/needs `connection`/);
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), sweeper: { intervalMs: -1 } })).toThrow(/sweeper.intervalMs/);
    // Stamped on every run: one Postgres cannot store would fail every start after a good boot.
    for (const appVersion of ['v1\u0000', 'v\ud800', '', 'x'.repeat(101)])
      expect(() => DurableModule.forRoot({ connection: databaseUrl(), appVersion })).toThrow(/appVersion must be a non-empty string/);
    // Yes/no options from the environment are strings: 'false' would be true.
    for (const [option, value] of [
      ['migrationsRun', { migrationsRun: 'false' }],
      ['worker.enabled', { worker: { enabled: 'false' } }],
      ['preparedStatements', { preparedStatements: 0 }],
      ['dashboard.readOnly', { dashboard: { auth: { insecureNoAuth: true }, readOnly: 'yes' } }],
    ] as const) {
      expect(() => DurableModule.forRoot({ connection: databaseUrl(), ...(value as object) })).toThrow(
        new RegExp(`DurableModule option ${option.replace('.', '\\.')} must be true or false; got`),
      );
    }
    // A misspelt option would be ignored, and its default taken without a word.
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), retention: { completed: '30d', canceled: '30d' } } as never)).toThrow(
      /DurableModule option retention: unknown option canceled; it takes completed, failed, cancelled, intervalMs, batchSize/,
    );
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), workers: { concurrency: 4 } } as never)).toThrow(
      /DurableModule: unknown option workers; it takes connection, schema, /,
    );
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), worker: { concurency: 4 } } as never)).toThrow(
      /DurableModule option worker: unknown option concurency; it takes enabled, concurrency/,
    );
  });

  it('a default follows the options it depends on: leaseMs alone boots, and only a value the user set is refused', () => {
    const resolved = (options: Partial<DurableModuleOptions>) =>
      (
        DurableModule.forRoot({ connection: databaseUrl(), ...options }).providers as Array<{
          provide: unknown;
          useValue?: ResolvedDurableOptions;
        }>
      ).find((p) => p.provide === DURABLE_OPTIONS)!.useValue!;
    expect(resolved({ leaseMs: 2_000 }).inlineWaitMs).toBe(1_000);
    expect(resolved({ leaseMs: 1_001 }).inlineWaitMs).toBe(500);
    expect(resolved({}).inlineWaitMs).toBe(2_000);
    expect([resolved({ leaseMs: 5_000 }).idleInTransactionTimeoutMs, resolved({}).idleInTransactionTimeoutMs]).toEqual([5_000, 30_000]);
    expect(resolved({ leaseMs: 120_000 }).idleInTransactionTimeoutMs).toBe(60_000);
    expect(resolved({ leaseMs: 2_000, sweeper: {}, retention: { completed: '1d' } })).toMatchObject({
      sweeper: { intervalMs: 1_000 },
      retention: { intervalMs: 60_000 },
    });
    expect(() => DurableModule.forRoot({ connection: databaseUrl(), leaseMs: 2_000, inlineWaitMs: 1_500 })).toThrow(
      /inlineWaitMs must be a whole number from 0 to 1000 \(half of leaseMs/,
    );
  });

  it('forRootAsync resolves options from a factory, and checks them the same way', async () => {
    const schema = fresh();
    const good = await Test.createTestingModule({
      imports: [DurableModule.forRootAsync({ useFactory: async () => ({ connection: databaseUrl(), schema }) })],
    }).compile();
    await good
      .createNestApplication({ logger: false })
      .init()
      .then((app) => app.close());
    await expect(
      Test.createTestingModule({
        imports: [DurableModule.forRootAsync({ useFactory: () => ({ connection: databaseUrl(), inlineWaitMs: -5 }) })],
      }).compile(),
    ).rejects.toThrow(/inlineWaitMs/);
  });

  it('a @Step on a request- or transient-scoped provider fails the boot, saying why and what to do, as a non-singleton @Workflow does', async () => {
    const scoped = /is request- or transient-scoped: .* must be a singleton provider/;
    await expect(startApp({ schema: fresh(), providers: [PerRequestMailer] })).rejects.toThrow(
      new RegExp(`@Step method send of PerRequestMailer ${scoped.source}`),
    );
    await expect(startApp({ schema: fresh(), providers: [TransientMailer] })).rejects.toThrow(
      new RegExp(`@Step method send of TransientMailer ${scoped.source}`),
    );
    await expect(startApp({ schema: fresh(), providers: [PerRequestWorkflow] })).rejects.toThrow(
      new RegExp(`Workflow PerRequestWorkflow ${scoped.source}`),
    );
  });

  it('two workflows with one name fail the boot, naming both classes', async () => {
    await expect(startApp({ schema: fresh(), providers: [First, Second] })).rejects.toThrow(
      /Two workflows are named "same-name": First and Second/,
    );
  });

  it('a boot that fails after the database opened, with no application left to close, leaves no connection keeping the process alive', async () => {
    // In a process of its own, so that nothing of another test's counts: its boot fails in a later provider.
    const child = spawnTs('test/fixtures/failing-boot.process.ts', { DATABASE_URL: databaseUrl(), SCHEMA: fresh() });
    let printed = '';
    const failed = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
        if (printed.includes('\n')) resolve();
      });
      child.once('close', (code) => reject(new Error(`the process exited (${code}) before it printed its failure: ${printed}`)));
    });
    await failed;
    // Then it exits by itself, at once: no connection of the module's pool keeps it alive (idle ones would until
    // their idle timeout, 10 s on). What was alive at the failure is only a hint when it does not: a query of
    // another provider's init may still be in flight then, and end after (asserting on it failed 1 time in 5).
    const code = await exited(child, 8_000).catch((e: Error) => {
      throw new Error(`${e.message}; at the failure it printed ${printed}`);
    });
    expect(code).toBe(0);
    expect((JSON.parse(printed) as { error: string }).error).toMatch(/Two workflows are named "same-name"/);
  }, 60_000);
});
