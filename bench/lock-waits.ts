import type { Client } from 'pg';
import { delay } from './measure';

/**
 * Samples on `client`, every `everyMs` until stopped, how many sessions of its database wait on a
 * lock; `stop` answers the samples. A workflow blocked by another session's lock would show here.
 */
export function sampleLockWaits(client: Client, everyMs: number): { stop(): Promise<number[]> } {
  const samples: number[] = [];
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      samples.push(rows[0].n);
      await delay(everyMs);
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return samples;
    },
  };
}
