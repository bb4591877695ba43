import { Client, Pool, PoolClient } from 'pg';
import { tablesFor } from './library-internals';

/**
 * The library's DurableDatabase as its repositories use it, over a pg Pool (a session per
 * transaction) or one Client (its session, with its settings): the same statements, sent unnamed,
 * and transactions opened as DurableDatabase.transaction opens them (`opening` sent with BEGIN).
 */
export function standInDatabase(schema: string, pg: Pool | Client) {
  return {
    tables: tablesFor(schema),
    query: async (sql: string, params?: unknown[]) => (await pg.query(sql, params)).rows,
    statement: (text: string, values: unknown[]) => ({ text, values }),
    transaction: async <T>(fn: (client: PoolClient | Client) => Promise<T>, opening?: string): Promise<T> => {
      const client = pg instanceof Pool ? await pg.connect() : pg;
      try {
        await client.query(opening ? `BEGIN; ${opening}` : 'BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        if (client !== pg) (client as PoolClient).release();
      }
    },
  };
}
