import type { Cluster } from '../cluster';
import type { HarnessDb } from '../db';
import type { Fleet } from '../fleet';
import type { ConnectionTargets, PlannedFault } from '../plan';

/** What a fault did, when: the checker matches duplicate effects and takeovers against these. */
export interface FaultRecord {
  kind: PlannedFault['kind'];
  phase: number;
  /** When it struck (ms since the epoch; the database runs on this machine, so its clock is ours). */
  at: number;
  /** Kill: the process is gone; pause: SIGCONT; connections: the last cut; restart: the server is back. */
  endAt: number;
  worker?: number;
  pid?: number;
  /** Runs the worker held (status running, its lease) when it was killed or stopped. */
  held?: string[];
  /** A kill or pause cued by the worker's own "effect" line: inside a step's crash window. */
  inWindow?: { runId: string; stepKey: string; ledgerId: number };
  /** Sessions cut by pg_terminate_backend, over the whole burst. */
  terminated?: number;
  /**
   * Group-commit batches the fault struck on the wire: sessions a connection burst cut while they ran
   * a batch statement, or (a kill) the batch of the killed worker that its server session was still
   * running once the process was gone.
   */
  inBatch?: number;
  /** Connections: when the burst's last cut of the pools' sessions was made (`endAt` also waits out the LISTEN cuts). */
  lastCutAt?: number;
  /** Whose sessions a connection fault cut (besides every LISTEN session). */
  targets?: ConnectionTargets;
  /** When every live worker was LISTENing again (connections, restart). */
  listenBackAt?: number;
  skipped?: string;
}

export interface FaultContext {
  fleet: Fleet;
  db: HarnessDb;
  cluster: Cluster;
  phase: number;
}

/**
 * A session running a group-commit batch: writes of several kinds EXECUTEd in one query
 * (DurableDatabase.together), or several of one kind in one statement, whose rows come as one
 * jsonb_to_recordset (a lone write has a statement of its own; the workload has no schedules, whose
 * pass reads one too). Both are early in the statement's text, which pg_stat_activity keeps 1 kB of.
 */
export const RUNNING_BATCH = `state = 'active' AND (query LIKE '%EXECUTE durable_together_%' OR query LIKE '%jsonb_to_recordset(%')`;

/** Whether a session that `where` selects runs a group-commit batch, looking for up to `ms` (once with 0). */
export async function batchOnTheWire(db: HarnessDb, where: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  do {
    const rows = await db.query(`SELECT 1 FROM pg_stat_activity WHERE (${where}) AND ${RUNNING_BATCH} LIMIT 1`);
    if (rows.length) return true;
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, 5)); // a batch lasts a few ms: look often, not flat out
  } while (Date.now() < end);
  return false;
}

/** How long a fault waits for a stopped or killed worker's statements in flight to finish. */
const SETTLE_MS = 5_000;

/** How long a cued fault waits for a worker to announce an effect before it strikes the planned one anyway. */
const CUE_MS = 4_000;

/**
 * Waits for the next "effect" line of a worker that is up: a slow step has written its effect and
 * not yet its checkpoint (the crash window), so the fault strikes that worker inside it. Any worker
 * that is up may be the one (runs are not spread evenly: the planned one may have none for a while),
 * as long as another one stays up; with one up, or no effect in time, the planned worker, outside any step.
 */
export async function cue(ctx: FaultContext, planned: number): Promise<{ worker: number; inWindow?: FaultRecord['inWindow'] }> {
  const up = ctx.fleet.workers.filter((w) => w.up);
  const cued =
    up.length >= 2 &&
    (await ctx.fleet.nextEffect(
      up.filter((w) => !w.struck).map((w) => w.index),
      CUE_MS,
    ));
  if (!cued) return strike(ctx, planned);
  const { runId, stepKey, ledgerId } = cued.effect;
  return { worker: cued.worker, inWindow: { runId, stepKey, ledgerId } };
}

/** The planned worker, struck at once (outside any step), once it is up and no other fault has it (bounded). */
export async function strike(ctx: FaultContext, worker: number): Promise<{ worker: number; inWindow?: undefined }> {
  await workerUp(ctx, worker);
  ctx.fleet.workers[worker].struck = true;
  return { worker };
}

/**
 * Runs the worker with this pid holds (the lease owner id is `host:pid:random`), read once the
 * statements it sent before it was stopped or killed have finished (bounded): one still waiting on a
 * lock when the fault struck may yet commit, and release the run, without anyone taking it over.
 */
export async function heldBy(db: HarnessDb, pid: number): Promise<string[]> {
  for (let end = Date.now() + SETTLE_MS; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const [busy] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1 AND state = 'active'`,
      [`chaos-%:${pid}`],
    );
    if (busy.n === 0) break;
  }
  const rows = await db.query<{ id: string }>(`SELECT id FROM durable.runs WHERE status = 'running' AND lease_owner LIKE $1`, [
    `%:${pid}:%`,
  ]);
  return rows.map((r) => r.id);
}

/** Waits until a worker slot is up (booted, not stopped) and no fault has it, bounded; false when it did not come up. */
export async function workerUp(ctx: FaultContext, worker: number, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ctx.fleet.workers[worker].up || ctx.fleet.workers[worker].struck) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** LISTEN sessions open now (one per worker that is listening). */
export async function listeners(db: HarnessDb, attempts?: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'nestjs-durable:listen:%' AND query ILIKE 'LISTEN%'`,
    [],
    attempts,
  );
  return row.n;
}

/** Polls until every worker that is up LISTENs again; the time it happened, or undefined after `ms`. */
export async function listenBack(ctx: FaultContext, ms = 30_000): Promise<number | undefined> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const up = ctx.fleet.upWorkers;
    if (ctx.cluster.up && (await listeners(ctx.db, 1).catch(() => -1)) >= up) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}
