import { DataSource, EntityManager } from 'typeorm';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors';
import type { DurableModuleOptions, PostgresDataSourceOptions } from '../interfaces';
import { durableEntities } from './entities';
import { Tables, tablesFor } from './tables';
import type { Rows, Statement } from './group-commit';

/**
 * The isolation of a transaction whose statements each need their own snapshot (a cascade, an
 * admission after its queue's lock), whatever the database's default: its first statement.
 */
export const READ_COMMITTED = 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED';

/**
 * The library's handle on Postgres: the TypeORM DataSource (its own, or the application's) and the
 * pg pool beneath it. Hot paths send raw SQL straight to the pool; a caller's EntityManager, when
 * given, takes its place so that the write joins the caller's transaction.
 */
export class DurableDatabase {
  private constructor(
    readonly dataSource: DataSource,
    readonly tables: Tables,
    private readonly owned: boolean,
    private readonly preparedStatements: boolean,
  ) {
    guardSessions(this.pool);
  }

  static async open(
    options: Pick<
      DurableModuleOptions,
      'connection' | 'schema' | 'statementTimeoutMs' | 'idleInTransactionTimeoutMs' | 'preparedStatements'
    >,
    poolSize: number,
  ): Promise<DurableDatabase> {
    const tables = tablesFor(options.schema ?? 'durable');
    const { connection } = options;
    if (connection instanceof DataSource) {
      if (connection.options.type !== 'postgres') {
        throw new InvalidArgumentError(`DurableModule needs a Postgres DataSource; got type "${connection.options.type}".`);
      }
      if (!connection.isInitialized) await connection.initialize();
      return new DurableDatabase(connection, tables, false, options.preparedStatements ?? true);
    }
    const dataSource = new DataSource({
      ...baseOptions(connection),
      schema: tables.schema,
      entities: durableEntities(tables.schema),
      migrations: [],
      synchronize: false,
      migrationsRun: false,
      extra: {
        max: poolSize,
        // A stuck statement or a transaction left open must not hold locks on the hot rows forever.
        statement_timeout: options.statementTimeoutMs,
        idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs,
        // Every statement here is a few index lookups; JIT compiling one (when stale statistics
        // overestimate it) would cost hundreds of milliseconds and save nothing.
        options: '-c jit=off',
        // Idle connections do not keep the process alive: a boot that fails after the pool opened (a bad
        // workflow declaration found by a later provider) leaves Nest no application to close, and the pool's
        // idle connections would hold the failed process up to the idle timeout. A connection in use still does.
        allowExitOnIdle: true,
        ...(typeof connection === 'object' ? connection.extra : {}),
      },
    } as PostgresDataSourceOptions);
    await dataSource.initialize();
    return new DurableDatabase(dataSource, tables, true, options.preparedStatements ?? true);
  }

  /** The pg pool under the DataSource (TypeORM's postgres driver keeps it as `master`). */
  get pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  /** Connection settings for a dedicated pg.Client (the LISTEN connection). */
  get clientConfig(): Pool['options'] {
    return this.pool.options;
  }

  /**
   * Named (prepared) statements on the pool: Postgres parses and plans each of the library's statements
   * once per connection instead of on every call, which is most of their cost. Off with
   * `preparedStatements: false` (PgBouncer in transaction mode). A caller's transaction stays unnamed.
   */
  private readonly names = new Map<string, string>();

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = [], manager?: EntityManager): Promise<T[]> {
    if (manager) {
      if (manager.connection.options.type !== 'postgres' || !manager.queryRunner) {
        throw new InvalidArgumentError(
          'TxOptions.manager must be the EntityManager of a running Postgres transaction (dataSource.transaction(manager => …)).',
        );
      }
      const result = await manager.queryRunner.query(sql, params, true);
      return result.records as T[];
    }
    return (await this.pool.query(this.statement(sql, params))).rows as T[];
  }

  /** `sql` as the library sends it: named, so each connection prepares it once, unless `preparedStatements` is off. */
  statement(sql: string, values: unknown[]): QueryConfig {
    if (!this.preparedStatements) return { text: sql, values };
    let name = this.names.get(sql);
    if (!name) {
      name = `durable_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
      this.names.set(sql, name);
    }
    return { name, text: sql, values };
  }

  /**
   * Sends statements in one transaction and one commit (a group commit's batch of several kinds of
   * write), answering each one's rows. In one round trip: a simple query of EXECUTEs of statements the
   * connection has prepared by name (a PREPARE goes with the first), each parameter written as a
   * literal. Without prepared statements (`preparedStatements: false`, PgBouncer) they go one after
   * another in one transaction. When the query fails, its transaction is rolled back but the PREPAREs
   * that ran before the failing statement stay (a session's prepared statements are not transactional):
   * the connection is asked which it holds, and closed only if it cannot answer (a cut session). Each
   * parameter must be text, a number, a boolean or null.
   */
  async together(statements: Statement[]): Promise<Rows[]> {
    if (statements.length === 1) return [await this.query(statements[0].sql, statements[0].params)];
    if (!this.preparedStatements) {
      return this.transaction(async (client) => {
        const rows: Rows[] = [];
        for (const { sql, params } of statements) rows.push((await client.query(sql, params)).rows);
        return rows;
      });
    }
    return this.onConnection(
      async (client) => {
        const prepared = this.preparedOn.get(client) ?? new Set<string>();
        // Named apart from the protocol's prepared statements (`statement`), which pg keeps track of itself.
        const names = statements.map(({ sql }) => this.statement(sql, []).name!.replace(/^durable_/, 'durable_together_'));
        const text = statements.flatMap(({ sql, params }, i) => [
          ...(prepared.has(names[i]) ? [] : [`PREPARE ${names[i]} AS ${sql}`]),
          `EXECUTE ${names[i]}(${params.map(literal).join(', ')})`,
        ]);
        const results = (await client.query(text.join(';\n'))) as unknown as Array<{ command: string; rows: Rows }>;
        names.forEach((name) => prepared.add(name));
        this.preparedOn.set(client, prepared);
        return results.filter((r) => r.command !== 'PREPARE').map((r) => r.rows);
      },
      async (client) => {
        try {
          const { rows } = await client.query<{ name: string }>(
            `SELECT name FROM pg_prepared_statements WHERE starts_with(name, 'durable_together_')`,
          );
          this.preparedOn.set(client, new Set(rows.map((r) => r.name)));
          return undefined;
        } catch (error) {
          return error as Error;
        }
      },
    );
  }

  /** The statements each pooled connection has prepared with PREPARE, for `together`: its own names, apart from the protocol's. */
  private readonly preparedOn = new WeakMap<PoolClient, Set<string>>();

  /**
   * Makes `count` connections idle in the pool now, opening the missing ones, so that transactions
   * begun in a moment find theirs open: a connection opened while the event loop is busy waits for it
   * (a crowd of schedules' transactions, 233 ms measured). A pool without room to spare is left alone.
   * Failures are left to those transactions.
   */
  async warm(count: number): Promise<void> {
    const { idleCount, totalCount, options } = this.pool;
    if (idleCount >= count || totalCount - idleCount + count > (options.max ?? count)) return;
    const opened = await Promise.allSettled(Array.from({ length: count }, () => this.pool.connect()));
    for (const client of opened) if (client.status === 'fulfilled') client.value.release();
  }

  /** Runs `fn` in a transaction on one pooled connection. */
  transaction<T>(fn: (client: PoolClient) => Promise<T>, opening?: string): Promise<T> {
    return this.onConnection(
      async (client) => {
        // `opening`: statements without parameters sent with BEGIN, in the same round trip.
        await client.query(opening ? `BEGIN; ${opening}` : 'BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      },
      (client) =>
        client.query('ROLLBACK').then(
          () => undefined,
          (rollback: Error) => rollback,
        ),
    );
  }

  /**
   * Runs `fn` on one pooled connection. When it fails, `failed` cleans up and says whether the session
   * is broken: a broken session is destroyed, not returned to the pool.
   */
  private async onConnection<T>(
    fn: (client: PoolClient) => Promise<T>,
    failed: (client: PoolClient, error: unknown) => Promise<Error | undefined>,
  ): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out client has no pool listener for 'error': a session cut mid-transaction would emit
    // one nobody handles and end the process. The failing query rejects anyway; that is the error we report.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (error) {
      broken ??= await failed(client, error);
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.owned && this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/** A parameter of `together` written into its EXECUTE: text, a number, a boolean, or null. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return textLiteral(value);
  throw new TypeError(`A statement sent together takes text, numbers, booleans and null; got ${typeof value}.`);
}

/**
 * Text as a string constant, written as pg's escapeLiteral writes it (quotes doubled; with a backslash,
 * an E'' constant with backslashes doubled, whatever standard_conforming_strings says), by native
 * replaces: escapeLiteral appends one character at a time, and a batch's parameter is kilobytes of
 * JSON. At 64 at once, that loop and its garbage were about a tenth of the Node CPU per workflow.
 */
function textLiteral(text: string): string {
  const quoted = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

/**
 * TypeORM Postgres options from a URL, options, or an existing DataSource (whose own entities are left
 * out), without what would change the module's schema behind its migrations: options made for an
 * application's own tests (`synchronize`, `dropSchema`, which drops every table of the schema at each
 * initialization, the migrator's before it takes its lock among them) leave it alone.
 */
export function baseOptions(connection: DurableModuleOptions['connection']): PostgresDataSourceOptions {
  if (typeof connection === 'string') return { type: 'postgres', url: connection };
  const source = connection instanceof DataSource ? (connection.options as PostgresDataSourceOptions) : connection;
  if (!source || source.type !== 'postgres') {
    throw new InvalidArgumentError(
      'DurableModule `connection` must be a postgres URL, TypeORM Postgres options ({ type: "postgres", … }), or a Postgres DataSource.',
    );
  }
  const {
    name: _name,
    subscribers: _subscribers,
    synchronize: _sync,
    dropSchema: _drop,
    migrationsRun: _run,
    schema: _schema,
    ...rest
  } = source as PostgresDataSourceOptions & { subscribers?: unknown; name?: string };
  return rest as PostgresDataSourceOptions;
}

/** Marks the clients that carry the listener of `guardSessions`. */
const GUARDED = Symbol('nestjs-durable:guarded');

/**
 * A session cut at the moment it is handed out (its FATAL read in the same chunk as its ready message,
 * before the borrower's continuation has attached a listener) emits 'error' on a client nobody listens
 * to, which ends the process: pg's promise-form connect and TypeORM's query runners both leave that
 * gap, and the chaos soak found it. Every client of the pool keeps one listener for its whole life; the
 * borrower still learns of the cut from its next query, which fails (and is retried where that is safe).
 */
function guardSessions(pool: Pool): void {
  pool.on('acquire', (client: PoolClient & { [GUARDED]?: true }) => {
    if (client[GUARDED]) return;
    client[GUARDED] = true;
    client.on('error', () => undefined);
  });
}
