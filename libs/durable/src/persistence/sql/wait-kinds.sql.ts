import { WAIT_KIND_NAMES, WaitKind, waitKindsWhere, waitKindsWokenBy, WakeSource } from '../../wait-kinds/wait-kind.registry';
import type { Tables } from '../tables';

/*
 * The registry of wait kinds (wait-kinds/wait-kind.registry.ts) as SQL: the statements test a run's
 * wait_kind through these, never through a kind's name typed into the SQL. Kind names are the
 * registry's own keys, so they are quoted here, not passed as parameters: the planner sees constants.
 */

/** One kind as an SQL literal. */
export const waitKindSql = (kind: WaitKind) => `'${kind}'`;

/**
 * The runs waiting for `kind`: parked with it; for `queue`, pending in a queue (that reason is worked out
 * when a run is read, never stored: a run waits for admission as `pending`, runs_queue_pending_idx).
 */
export const waitingForSql = (kind: WaitKind) =>
  kind === 'queue' ? `status = 'pending' AND queue IS NOT NULL` : `status = 'waiting' AND wait_kind = ${waitKindSql(kind)}`;

const anyOf = (column: string, kinds: readonly WaitKind[]) => `${column} = ANY(ARRAY[${kinds.map(waitKindSql).join(', ')}]::text[])`;

/** True where `column` (a runs.wait_kind) is a kind that `source` wakes. */
export const wokenBySql = (column: string, source: WakeSource) => anyOf(column, waitKindsWokenBy(source));

/** True where `column` is a kind that `resume` finishes (rather than re-invokes). */
export const resumeFinishesSql = (column: string) =>
  anyOf(
    column,
    waitKindsWhere((kind) => kind.resume === 'finish'),
  );

/** True where `column` is a kind whose instants the test clock may move. */
export const clockMovesSql = (column: string) =>
  anyOf(
    column,
    waitKindsWhere((kind) => kind.clock),
  );

/** The CHECK on runs.wait_kind: a parked run's kind is one of `kinds` (a migration passes the list it shipped with). */
export const waitKindCheck = (kinds: readonly string[] = WAIT_KIND_NAMES) =>
  `wait_kind IN (${kinds.map((kind) => `'${kind}'`).join(', ')})`;

/** Replaces the CHECK on runs.wait_kind by one allowing exactly `kinds`. */
export const replaceWaitKindCheckSql = (t: Tables, kinds: readonly string[]) =>
  `ALTER TABLE ${t.runs} DROP CONSTRAINT IF EXISTS runs_wait_kind_check, ADD CONSTRAINT runs_wait_kind_check CHECK (${waitKindCheck(kinds)})`;
