import { INestApplication, ModuleMetadata, Provider } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, TestingModule } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DurableModule, DurableModuleOptions, SignalService, WorkflowClient } from 'nestjs-durable';
import { RUN_ID_PARAM_LENGTH } from 'nestjs-durable/dashboard/dashboard-api-gate';

/** The test database: DATABASE_URL, or the embedded cluster the global setup started. */
export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the suites through jest (its global setup provides a database).');
  return url;
}

/** The HTTP platforms the dashboard and its REST API are tested on. */
export const PLATFORMS = ['express', 'fastify'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * The compiled module as an application on `platform` (default Express), without logs. Fastify gets a
 * body limit of 100 kB, Express' default, so that tests show the dashboard API's own limit on both.
 */
export function createApplication(moduleRef: TestingModule, platform: Platform = 'express'): INestApplication {
  return platform === 'fastify'
    ? moduleRef.createNestApplication<NestFastifyApplication>(
        new FastifyAdapter({ bodyLimit: 100_000, routerOptions: { maxParamLength: RUN_ID_PARAM_LENGTH } }),
        { logger: false },
      )
    : moduleRef.createNestApplication({ logger: false });
}

/** A schema of its own for each test file, so files run in parallel on one database. */
export function uniqueSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export interface DurableTestApp {
  app: INestApplication;
  /** The base URL when started with `listen: true`. */
  url: string;
  client: WorkflowClient;
  signals: SignalService;
  get<T>(type: { prototype: T }): T;
  close(): Promise<void>;
}

/** Boots a Nest application with DurableModule in `schema` and the given workflow providers. */
export async function startApp(args: {
  schema: string;
  providers?: Provider[];
  imports?: ModuleMetadata['imports'];
  options?: Partial<DurableModuleOptions>;
  /** Listen on a free port (for HTTP tests); else the app is only initialised. */
  listen?: boolean;
  /** The HTTP platform: Express (Nest's default) or Fastify; default DURABLE_TEST_PLATFORM (the jest project's), else Express. */
  platform?: Platform;
}): Promise<DurableTestApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      DurableModule.forRoot({
        connection: databaseUrl(),
        schema: args.schema,
        sweeper: { intervalMs: 200 },
        inlineWaitMs: 300,
        leaseMs: 5_000,
        shutdownGraceMs: 2_000,
        ...args.options,
      }),
      ...(args.imports ?? []),
    ],
    providers: args.providers ?? [],
  }).compile();
  moduleRef.useLogger(false);
  const app = createApplication(moduleRef, args.platform ?? (process.env.DURABLE_TEST_PLATFORM as Platform | undefined));
  let url = '';
  try {
    if (args.listen) {
      await app.listen(0, '127.0.0.1');
      url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    } else {
      await app.init();
    }
  } catch (error) {
    // A boot that fails (bad options) has opened the database already: close it, or its pool outlives the test.
    await app.close().catch(() => undefined);
    throw error;
  }
  return {
    app,
    url,
    client: app.get(WorkflowClient),
    signals: app.get(SignalService),
    get: (type) => app.get(type as never),
    close: () => app.close(),
  };
}

/**
 * The apps of one test file, all on one schema: `boot` starts one more with the file's providers and
 * options (a call's options on top of them). After the file every app is closed and the schema dropped.
 * Call it in a describe block.
 */
export function fileApps(args: { schema: string; providers: Provider[]; options?: Partial<DurableModuleOptions>; listen?: boolean }): {
  db: Db;
  boot: (options?: Partial<DurableModuleOptions>) => Promise<DurableTestApp>;
} {
  const db = new Db(args.schema);
  const apps: DurableTestApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await db.dropSchema();
  });
  const boot = async (options: Partial<DurableModuleOptions> = {}) => {
    const app = await startApp({ ...args, options: { ...args.options, ...options } });
    apps.push(app);
    return app;
  };
  return { db, boot };
}

/** A plain connection for looking at the tables directly. Queries made at once take turns (pg 9 refuses overlapping ones). */
export class Db {
  private readonly client = new Client(databaseUrl());
  private connected?: Promise<void>;
  private previous: Promise<unknown> = Promise.resolve();

  constructor(readonly schema: string) {}

  query<T = Record<string, any>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const turn = this.previous.then(async () => {
      this.connected ??= this.client.connect().then(() => undefined);
      await this.connected;
      return (await this.client.query(sql.replaceAll('durable.', `"${this.schema}".`), params)).rows as T[];
    });
    this.previous = turn.catch(() => undefined);
    return turn;
  }

  async count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
    const [row] = await this.query<{ n: string }>(`SELECT count(*) AS n FROM durable.${table} WHERE ${where}`, params);
    return Number(row.n);
  }

  async dropSchema(): Promise<void> {
    await this.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    await this.close();
  }

  /** Closes the connection, leaving the schema. */
  async close(): Promise<void> {
    await this.previous;
    await this.client.end();
  }
}

/** Waits until `check` returns a value (not undefined, null or false), polling; fails with `what` after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A login role made for one test, `setup` run as the admin once it exists (`$role` stands for its quoted
 * name): the URL to connect as it, and `drop`, to call once everything connected as it has closed (what
 * it owns goes with it).
 */
export async function loginRole(name: string, setup: string[]): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = async (sql: string) => {
    const client = new Client(databaseUrl());
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE ROLE "${name}" LOGIN PASSWORD 'role'`);
  for (const sql of setup) await admin(sql.replaceAll('$role', `"${name}"`));
  const url = new URL(databaseUrl());
  url.username = name;
  url.password = 'role';
  return { url: url.toString(), drop: () => admin(`DROP OWNED BY "${name}" CASCADE; DROP ROLE "${name}"`) };
}

/**
 * A superuser whose transactions default to repeatable read (as a database or role may be set up), for a
 * test of statements that need a snapshot per statement.
 */
export const repeatableReadRole = (name: string) =>
  loginRole(name, [`ALTER ROLE $role SUPERUSER`, `ALTER ROLE $role SET default_transaction_isolation = 'repeatable read'`]);
