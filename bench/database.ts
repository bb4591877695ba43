import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from 'pg';

export const DATABASES = { ours: 'durable_bench_ours', dbos: 'durable_bench_dbos', floor: 'durable_bench_floor' } as const;

const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The one Postgres server every system is measured on. */
export interface Server {
  source: 'DATABASE_URL' | 'local' | 'embedded';
  /** The server's own database, for administration and the statistics views. */
  adminUrl: string;
  url(database: string): string;
  /** Whether pg_stat_statements is loaded (shared_preload_libraries). */
  statStatements: boolean;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set; else the machine's Postgres on 127.0.0.1:5432 when it answers; else an
 * embedded cluster (test/setup/embedded-postgres.mjs), started with pg_stat_statements loaded.
 */
export async function openServer(opts: { embedded?: boolean } = {}): Promise<Server> {
  if (!opts.embedded && process.env.DATABASE_URL) return connect('DATABASE_URL', process.env.DATABASE_URL, async () => undefined);
  if (!opts.embedded && (await answers(LOCAL_URL))) return connect('local', LOCAL_URL, async () => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'durable-bench-pg-'));
  const module = resolve(__dirname, '../../test/setup/embedded-postgres.mjs');
  // A real dynamic import: tsc would turn `import()` into require(), which cannot load an .mjs file.
  const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<EmbeddedModule>;
  const { startEmbeddedPostgres } = await importEsm(pathToFileURL(module).href);
  const cluster = await startEmbeddedPostgres({ dir, postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements'] });
  return connect('embedded', cluster.url, async () => {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}

interface EmbeddedModule {
  startEmbeddedPostgres(opts: { dir: string; postgresFlags?: string[] }): Promise<{ url: string; stop(): Promise<void> }>;
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function connect(source: Server['source'], adminUrl: string, stop: () => Promise<void>): Promise<Server> {
  const admin = new Client(adminUrl);
  await admin.connect();
  const query = async <T>(sql: string, params: unknown[] = []) => (await admin.query(sql, params)).rows as T[];
  const server: Server = {
    source,
    adminUrl,
    url: (database) => {
      const url = new URL(adminUrl);
      url.pathname = `/${database}`;
      return url.toString();
    },
    statStatements: false,
    query,
    stop: async () => {
      await admin.end();
      await stop();
    },
  };
  server.statStatements = await loadStatStatements(query);
  return server;
}

/** pg_stat_statements answers only when preloaded; otherwise the admin database is left untouched. */
async function loadStatStatements(query: Server['query']): Promise<boolean> {
  const [{ preload }] = await query<{ preload: string }>(`SELECT current_setting('shared_preload_libraries') AS preload`);
  if (
    !preload
      .split(',')
      .map((s) => s.trim())
      .includes('pg_stat_statements')
  )
    return false;
  try {
    await query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    return true;
  } catch {
    return false;
  }
}

/** Drops and creates the systems' databases, so every run starts from empty tables. */
export async function recreateDatabases(server: Server): Promise<void> {
  for (const name of Object.values(DATABASES)) {
    await server.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await server.query(`CREATE DATABASE "${name}"`);
  }
}

/**
 * VACUUM ANALYZE in every system's database: what autovacuum would have done by now. Run between
 * sections, so a section does not pay for the dead rows and stale statistics of the one before it
 * (the machine's server may run with autovacuum off); all systems alike.
 */
export async function vacuumDatabases(server: Server): Promise<void> {
  for (const name of Object.values(DATABASES)) await vacuumDatabase(server, name);
}

/** VACUUM ANALYZE in one database (see vacuumDatabases; BenchContext.rounds runs it before each round). */
export async function vacuumDatabase(server: Server, name: string): Promise<void> {
  const client = new Client(server.url(name));
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

/** The settings that decide commit cost and capacity, as published with the figures. */
export async function serverSettings(server: Server): Promise<{ version: string; settings: Record<string, string> }> {
  const [{ version }] = await server.query<{ version: string }>(`SELECT current_setting('server_version') AS version`);
  const names = [
    'fsync',
    'synchronous_commit',
    'wal_sync_method',
    'full_page_writes',
    'commit_delay',
    'shared_buffers',
    'work_mem',
    'max_connections',
    'wal_level',
    'max_wal_size',
    'checkpoint_timeout',
    'shared_preload_libraries',
    'jit',
    'autovacuum',
    'autovacuum_naptime',
  ];
  const rows = await server.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1::text[]) ORDER BY name`,
    [names],
  );
  return { version, settings: Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting])) };
}

/** Commits of one database and transaction ids assigned on the whole server (each write transaction takes one). */
export async function transactionCounters(server: Server, database: string): Promise<{ commits: number; xids: number; walBytes: number }> {
  await server.query('SELECT pg_stat_clear_snapshot()');
  const [row] = await server.query<{ commits: string; xids: string; wal: string }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1) AS commits,
            pg_snapshot_xmax(pg_current_snapshot())::text AS xids,
            pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal`,
    [database],
  );
  return { commits: Number(row.commits), xids: Number(row.xids), walBytes: Number(row.wal) };
}

/** pg_stat_statements calls by statement, for one database (empty when not loaded). */
export async function statementCalls(server: Server, database: string): Promise<Map<string, { query: string; calls: number }>> {
  if (!server.statStatements) return new Map();
  const rows = await server.query<{ queryid: string; query: string; calls: string }>(
    `SELECT s.queryid::text, s.query, s.calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
    [database],
  );
  return new Map(rows.map((r) => [r.queryid, { query: r.query, calls: Number(r.calls) }]));
}
