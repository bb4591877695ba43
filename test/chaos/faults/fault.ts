import type { Cluster } from '../cluster';
import { HarnessDb, isConnectionError } from '../db';
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

/**
 * How long the harness may hold the rows of the runs executing while it waits for a batch to queue on
 * them: well under a lease renewal's interval, so no lease lapses for it (a renewal skips a row it
 * cannot lock, and renews it at the next beat).
 */
const HOLD_MS = 400;

/**
 * Runs `strike` while a group-commit batch of the sessions `where` selects runs on the server, waiting
 * on a row the harness holds: the rows of the runs executing (status running, lease owner like
 * `owners`) are locked FOR UPDATE for up to HOLD_MS, and a batch that writes for one of them waits
 * there (its FOR SHARE, or an end's update). True when `strike` came while such a batch waited; else
 * (no run executing, or no batch within HOLD_MS) `strike` runs all the same, and false. The rows are
 * let go after `strike`: a batch of a killed worker then commits with no one to read its answer; a
 * cut one is tried again whole by its worker.
 */
export async function strikeInABatch(db: HarnessDb, owners: string, where: string, strike: () => Promise<void>): Promise<boolean> {
  let struck = false;
  const once = async () => {
    if (struck) return;
    struck = true;
    await strike();
  };
  return db
    .session(async (query) => {
      await query('BEGIN');
      try {
        const held = await query(`SELECT id FROM durable.runs WHERE status = 'running' AND lease_owner LIKE $1 FOR UPDATE SKIP LOCKED`, [
          owners,
        ]);
        let waiting = false;
        for (const end = Date.now() + HOLD_MS; held.length && !waiting && Date.now() < end;) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          waiting =
            (await query(`SELECT 1 FROM pg_stat_activity WHERE (${where}) AND wait_event_type = 'Lock' AND ${RUNNING_BATCH} LIMIT 1`))
              .length > 0;
        }
        await once();
        return waiting;
      } finally {
        await query('COMMIT');
      }
    })
    .catch(async (error: unknown) => {
      if (!isConnectionError(error)) throw error;
      await once(); // the server restarting (or the session cut): strike without the batch
      return false;
    });
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
