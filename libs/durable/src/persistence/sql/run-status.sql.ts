import type { RunStatus } from '../../interfaces';

/**
 * A run's status tested in a statement that finds its runs by primary key, written so that no index
 * can serve the test (`|| ''` leaves the value as it is): the primary key stays the only way in.
 * Written plainly, statistics that saw few runs of the status (taken in a quiet minute, or of a young
 * table) let the planner read an index on the status (a partial one, or before migration 18 the
 * listing's) and filter on the id, so each end, park or renewal read every running run; a prepared
 * statement keeps that plan until the next ANALYZE. `alias`: the runs table's, with its dot.
 */
export const statusIn = (alias: string, ...statuses: RunStatus[]) =>
  `${alias}status || '' IN (${statuses.map((status) => `'${status}'`).join(', ')})`;

/**
 * A run's status as the listing's index holds it (`runs_listed_status_idx`, migration 18): the runs
 * list and the overview's counts by status filter on this. `lower` changes nothing (statuses are lower
 * case); it keys the index on an expression that no engine statement writes, so their plain
 * `status = …` tests can be planned on the partial indexes only. `alias`: the runs table's, with its dot.
 */
export const listedStatus = (alias = '') => `lower(${alias}status)`;
