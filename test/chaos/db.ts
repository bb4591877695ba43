import { Pool } from 'pg';

/**
 * The harness's own connections (application_name 'chaos-harness', never a fault's target). The
 * server restarts under it, so a query is retried on connection errors, a bounded number of times.
 */
export class HarnessDb {
  private readonly pool: Pool;

  constructor(
    url: string,
    readonly schema: string,
  ) {
    this.pool = new Pool({ connectionString: url, application_name: 'chaos-harness', max: 4, connectionTimeoutMillis: 3_000 });
    this.pool.on('error', () => undefined); // an idle session cut by a restart: the pool drops it
  }

  /** `durable.` in the text stands for the chaos schema. */
  async query<T = Record<string, any>>(sql: string, params: unknown[] = [], attempts = 40): Promise<T[]> {
    const text = sql.replaceAll('durable.', `"${this.schema}".`);
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.pool.query(text, params)).rows as T[];
      } catch (error) {
        if (attempt >= attempts || !isConnectionError(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  /** One session of the pool for `use` (a transaction that must stay on it), not retried: the caller decides. */
  async session<T>(use: (query: (sql: string, params?: unknown[]) => Promise<unknown[]>) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      return await use(async (sql, params = []) => (await client.query(sql.replaceAll('durable.', `"${this.schema}".`), params)).rows);
    } finally {
      client.release();
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** Errors of a lost or refused connection (server restarting, session terminated), worth a retry. */
export function isConnectionError(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03', '08006', '08003', '08001'].includes(code ?? '') ||
    /terminat|Connection|connect|timeout/i.test(message ?? '')
  );
}
