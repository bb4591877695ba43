import { tablesFor } from './library-internals';
import type { Client } from 'pg';

/**
 * Writes `count` runs of `bench-nap` that are asleep until `wakeAt` (+ up to `spreadMs`), row for row
 * as the library leaves a run that started, journaled its timer and parked (start-run, timerSql and
 * park-run in libs/durable/src/persistence/sql): the run waiting with its reason and wake_at, the
 * `sleep:nap` checkpoint holding the same instant in the serializer's Date form, and the `started`
 * and `parked` history rows. Inserted in batches, each its own transaction.
 */
export async function seedSleepingRuns(
  db: Client,
  schema: string,
  opts: { count: number; prefix: string; wakeAt: string; spreadMs: number; batch?: number },
): Promise<void> {
  const t = tablesFor(schema);
  const batch = opts.batch ?? 50_000;
  for (let from = 0; from < opts.count; from += batch) {
    await db.query(
      `WITH w AS (
         SELECT $1::text || g AS id, $3::timestamptz + (g % $4) * interval '1 millisecond' AS at,
                to_char(($3::timestamptz + (g % $4) * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS iso
         FROM generate_series($5::int, $6::int) g
       ), runs AS (
         INSERT INTO ${t.runs} (id, workflow, status, input, wait, wait_kind, wait_name, wake_at, lease_token)
         SELECT id, 'bench-nap', 'waiting', $2, jsonb_build_object('kind', 'sleep', 'name', 'nap', 'until', iso, 'since', now()),
                'sleep', 'sleep:nap', at, 1
         FROM w
         RETURNING id, run_day, wait
       ), steps AS (
         INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result)
         SELECT w.id, runs.run_day, 'sleep:nap', 'sleep', 'ok', json_build_object('$t', 'Date', 'v', iso)::text FROM w JOIN runs USING (id)
       )
       INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
       SELECT id, run_day, e.event, 'bench-seed', CASE WHEN e.event = 'parked' THEN wait END
       FROM runs, (VALUES ('started'), ('parked')) AS e(event)`,
      [
        opts.prefix,
        JSON.stringify({ ms: 3_600_000, report: false }),
        opts.wakeAt,
        Math.max(1, opts.spreadMs),
        from + 1,
        Math.min(opts.count, from + batch),
      ],
    );
  }
}

/**
 * Writes `count` runs of `bench-await-go` waiting for the signal `go`, each with five business keys:
 * `orderId` (its own), `customer` (shared by 20 runs), `sku` (shared by `count / 1000`), `region`
 * (1 of 20) and `channel` (all), as start-run and park-run leave them. One statement per batch.
 */
export async function seedKeyedRuns(db: Client, schema: string, opts: { count: number; batch?: number }): Promise<void> {
  const t = tablesFor(schema);
  const batch = opts.batch ?? 100_000;
  for (let from = 1; from <= opts.count; from += batch) {
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wait, wait_kind, wait_name, lease_token, keys)
       SELECT 'keyed-' || g, 'bench-await-go', 'waiting', 'null', jsonb_build_object('kind', 'signal', 'name', 'go', 'since', now()),
              'signal', 'go', 1,
              jsonb_build_object('orderId', 'A-' || g, 'customer', 'c-' || (g % ($3::int / 20)), 'sku', 's-' || (g % 1000),
                                 'region', 'r-' || (g % 20), 'channel', 'web')
       FROM generate_series($1::int, $2::int) g`,
      [from, Math.min(opts.count, from + batch - 1), opts.count],
    );
  }
}
