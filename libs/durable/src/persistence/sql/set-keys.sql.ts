import type { Tables } from '../tables';

/**
 * `ctx.setKeys` in one statement, fenced by the lease token and journaled once under its key: the
 * first execution merges the keys into the run's (adding or replacing by name) and records the
 * step; a re-execution finds the step and changes nothing, so a later setKeys of the same name is
 * never undone by a replay of an earlier one. Nothing is written when the merge would exceed $5 keys.
 * $1 run, $2 token, $3 step key, $4 keys (jsonb), $5 the most keys a run may have.
 */
export const setKeysSql = (t: Tables) => `
WITH lease AS (
  SELECT run_day, COALESCE(keys, '{}'::jsonb) || $4::jsonb AS merged FROM ${t.runs} WHERE id = $1 AND lease_token = $2 FOR UPDATE
), fits AS (
  SELECT run_day, merged FROM lease WHERE (SELECT count(*) FROM jsonb_object_keys(merged)) <= $5
), ins AS (
  INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result)
  SELECT $1, run_day, $3, 'set-keys', 'ok', $4::text FROM fits
  ON CONFLICT (run_id, key, run_day) DO NOTHING
  RETURNING 1
), merged AS (
  UPDATE ${t.runs} SET keys = (SELECT merged FROM fits), updated_at = now() WHERE id = $1 AND EXISTS (SELECT 1 FROM ins)
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM lease) AS leased, EXISTS (SELECT 1 FROM fits) AS fits`;
