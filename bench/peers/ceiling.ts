import { Pool } from 'pg';
import type { Peer, PeerSpec } from './peer';

/** The server's commit ceiling: single-row jsonb inserts, each its own commit. Every peer sits under it. */
export async function openCeiling(spec: PeerSpec): Promise<Peer> {
  const pool = new Pool({ connectionString: spec.url, max: spec.concurrency });
  await pool.query(`CREATE TABLE IF NOT EXISTS ceiling_rows (id bigserial PRIMARY KEY, payload jsonb NOT NULL)`);
  return {
    runOnce: () => pool.query(`INSERT INTO ceiling_rows (payload) VALUES ($1)`, ['{"n":1}']),
    close: () => pool.end(),
  };
}
