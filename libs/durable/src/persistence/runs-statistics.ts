import type { Tables } from './tables';

/** Below this many changed rows the runs table is left to autovacuum, however young. */
export const YOUNG_TABLE_ROWS = 1_000;

/**
 * Whether the runs table's planner statistics are due: it has changed by more rows since they were
 * last gathered than it held then (and by at least $1), so it has at least doubled, and this user may
 * gather them (the table's owner, or a member of its role). Autovacuum gathers them after a tenth of
 * the table has changed, but only at its next pass (a minute apart by default), and a young table
 * doubles many times in a minute; a prepared statement planned meanwhile keeps the plan it made for the
 * smaller table (see RunStatisticsService).
 */
export const runsStatisticsDueSql = (t: Tables) => `
SELECT pg_stat_get_mod_since_analyze(c.oid) >= GREATEST($1::float8, c.reltuples) AND pg_has_role(c.relowner, 'USAGE') AS due
FROM pg_class c WHERE c.oid = '${t.runs}'::regclass`;

/** Gathers the runs table's statistics; skips when another session holds its lock (one doing the same). */
export const analyzeRunsSql = (t: Tables) => `ANALYZE (SKIP_LOCKED) ${t.runs}`;
