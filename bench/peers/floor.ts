import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import type { Peer, PeerSpec } from './peer';

/**
 * The hand-written floor: what a 3-step workflow costs at the least on this server. Five statements,
 * each its own commit: insert the run, one checkpoint insert per step, one update to end it.
 * No claim, no lease, no history, no serializer: any engine pays at least this.
 */
export async function openFloor(spec: PeerSpec): Promise<Peer> {
  const pool = new Pool({ connectionString: spec.url, max: spec.concurrency + 5 });
  await pool.query(`
    CREATE TABLE IF NOT EXISTS floor_runs (id uuid PRIMARY KEY, status text NOT NULL, input jsonb, output jsonb,
      created_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz);
    CREATE TABLE IF NOT EXISTS floor_steps (run_id uuid NOT NULL, step int NOT NULL, output jsonb NOT NULL, PRIMARY KEY (run_id, step))`);
  return {
    async runOnce() {
      const id = randomUUID();
      await pool.query(`INSERT INTO floor_runs (id, status, input) VALUES ($1, 'running', $2)`, [id, '1']);
      let value = 1;
      for (let step = 1; step <= 3; step++) {
        value += 1;
        await pool.query(`INSERT INTO floor_steps (run_id, step, output) VALUES ($1, $2, $3)`, [id, step, String(value)]);
      }
      await pool.query(`UPDATE floor_runs SET status = 'completed', output = $2, finished_at = now() WHERE id = $1`, [id, String(value)]);
      return value;
    },
    close: () => pool.end(),
  };
}
