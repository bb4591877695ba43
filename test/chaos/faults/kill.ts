import type { PlannedFault } from '../plan';
import { batchOnTheWire, cue, FaultContext, FaultRecord, heldBy, strike, workerUp } from './fault';

/** How long an uncued kill waits for a group-commit batch of its worker to be on the wire before it strikes anyway. */
const BATCH_CUE_MS = 2_000;

/**
 * SIGKILL a worker right after one announces a step's effect (the effect is written, its checkpoint
 * is not: the crash window), or else once a group-commit batch of its runs on the server (when one
 * comes within BATCH_CUE_MS), then boot a new process in its place. A kill counts as in a batch when
 * a batch of the worker's was still running on the server after the SIGKILL was sent: the worker
 * never saw its answer.
 */
export async function killWorker(ctx: FaultContext, fault: Extract<PlannedFault, { kind: 'kill' }>): Promise<FaultRecord> {
  const record: FaultRecord = { kind: 'kill', phase: ctx.phase, at: Date.now(), endAt: Date.now(), worker: fault.worker };
  if (!(await workerUp(ctx, fault.worker))) return { ...record, skipped: 'worker not up' };
  const { worker, inWindow } = fault.inWindow ? await cue(ctx, fault.worker) : await strike(ctx, fault.worker);
  try {
    const sessions = `application_name = 'chaos-worker:${ctx.fleet.workers[worker].current?.pid}'`;
    if (!inWindow) await batchOnTheWire(ctx.db, sessions, BATCH_CUE_MS);
    Object.assign(record, { worker, inWindow, at: Date.now() });
    const killed = ctx.fleet.killWorker(worker); // the SIGKILL is sent before this returns
    const cut = batchOnTheWire(ctx.db, sessions, 0);
    record.pid = await killed;
    record.inBatch = (await cut) ? 1 : 0;
    record.endAt = Date.now();
    record.held = record.pid ? await heldBy(ctx.db, record.pid) : [];
    await new Promise((resolve) => setTimeout(resolve, fault.restartAfterMs));
    await waitForServer(ctx);
    await ctx.fleet.startWorker(worker);
  } finally {
    ctx.fleet.workers[worker].struck = false;
  }
  return record;
}

/** A worker booting while the server restarts fails its boot; wait for the server first (bounded). */
async function waitForServer(ctx: FaultContext): Promise<void> {
  for (let i = 0; i < 100 && !ctx.cluster.up; i++) await new Promise((resolve) => setTimeout(resolve, 100));
}
