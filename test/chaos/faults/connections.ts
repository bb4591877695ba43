import type { HarnessDb } from '../db';
import type { ConnectionTargets, PlannedFault } from '../plan';
import { FaultContext, FaultRecord, listenBack, RUNNING_BATCH, strikeInABatch } from './fault';

/** How often the LISTEN sessions are cut while they are held down: faster than the listener reconnects. */
const LISTEN_CUT_EVERY_MS = 50;

/** The sessions of each target: a process's pool is named `chaos-<role>:<pid>`. */
const SESSIONS: Record<ConnectionTargets, string> = {
  workers: `application_name LIKE 'chaos-worker:%'`,
  senders: `application_name LIKE 'chaos-sender:%'`,
  both: `application_name LIKE 'chaos-worker:%' OR application_name LIKE 'chaos-sender:%'`,
};

/**
 * pg_terminate_backend on every session of the targets (the workers' pools, the senders' pools: the
 * starts, deliveries, application transactions and operator actions in flight, or both) and on every
 * LISTEN session, `times` times in a row, the first while a group-commit batch of the targets waits on
 * a run's row the harness holds (strikeInABatch; at once when none comes); meanwhile, for `listenDownMs`, every LISTEN session as soon
 * as it is back. Wakes must fall back to the sweeper while LISTEN is down, and LISTEN must come back after.
 */
export async function cutConnections(ctx: FaultContext, fault: Extract<PlannedFault, { kind: 'connections' }>): Promise<FaultRecord> {
  const record: FaultRecord = {
    kind: 'connections',
    phase: ctx.phase,
    at: Date.now(),
    endAt: Date.now(),
    terminated: 0,
    inBatch: 0,
    targets: fault.targets,
  };
  let first = true;
  const cutAll = async () => {
    if (first) record.at = Date.now(); // the first cut (strikeInABatch may have waited for it)
    first = false;
    const cut = await terminate(ctx.db, `${SESSIONS[fault.targets]} OR application_name LIKE 'nestjs-durable:listen:%'`);
    record.terminated! += cut.n;
    record.inBatch! += cut.inBatch;
  };
  const all = async () => {
    // The first cut while a batch of the targets waits on a run's row the harness holds, when one comes.
    await strikeInABatch(ctx.db, '%', SESSIONS[fault.targets], cutAll);
    for (let i = 1; i < fault.times; i++) {
      await pause(fault.spacingMs);
      await cutAll();
    }
    record.lastCutAt = Date.now();
  };
  const listen = async () => {
    const end = Date.now() + fault.listenDownMs;
    while (Date.now() < end) {
      record.terminated! += (await terminate(ctx.db, `application_name LIKE 'nestjs-durable:listen:%'`)).n;
      await pause(LISTEN_CUT_EVERY_MS);
    }
  };
  await Promise.all([all(), listen()]);
  record.endAt = Date.now();
  record.listenBackAt = await listenBack(ctx);
  return record;
}

/** Cuts the sessions that `where` selects; how many, and how many of them were running a group-commit batch. */
async function terminate(db: HarnessDb, where: string): Promise<{ n: number; inBatch: number }> {
  // Materialized first: in a plain WHERE the planner may call pg_terminate_backend before the filter.
  const [row] = await db.query<{ n: number; in_batch: number }>(
    `WITH target AS MATERIALIZED (SELECT pid, ${RUNNING_BATCH} AS batch FROM pg_stat_activity WHERE (${where}) AND pid <> pg_backend_pid()),
          cut AS MATERIALIZED (SELECT batch FROM target WHERE pg_terminate_backend(pid))
     SELECT count(*)::int AS n, count(*) FILTER (WHERE batch)::int AS in_batch FROM cut`,
  );
  return { n: row.n, inBatch: row.in_batch };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
