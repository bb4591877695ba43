import type { RunStatus } from '../../interfaces';

/**
 * A run's status tested in a statement that finds its runs by primary key, written so that no index on
 * status can serve the test (`|| ''` leaves the value as it is): the primary key stays the only way in.
 * Written plainly, statistics that saw few runs running (taken in a quiet minute, or of a young table)
 * make the planner read runs_status_idx for the status and filter on the id, so each end, park or
 * renewal reads every running run; a prepared statement keeps that plan until the next ANALYZE.
 * `alias`: the runs table's, with its dot.
 */
export const statusIn = (alias: string, ...statuses: RunStatus[]) =>
  `${alias}status || '' IN (${statuses.map((status) => `'${status}'`).join(', ')})`;
