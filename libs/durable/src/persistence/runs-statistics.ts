import type { Tables } from './tables';

/** Below this many changed rows the runs table is left to autovacuum, however young. */
export const YOUNG_TABLE_ROWS = 1_000;

/** Analyzes the runs table if its statistics are due (the run-statistics migration); answers whether it did. $1 YOUNG_TABLE_ROWS. */
export const analyzeRunsIfDueSql = (t: Tables) => `SELECT ${t.analyzeRunsIfDue}($1::bigint) AS analyzed`;
