import type { PlannedFault } from '../plan';
import { cue, FaultContext, FaultRecord, heldBy, strike, strikeInABatch, workerUp } from './fault';

/**
 * SIGKILL a worker right after one announces a step's effect (the effect is written, its checkpoint
 * is not: the crash window), or else while a group-commit batch of its waits on the server on a run's
 * row the harness holds (strikeInABatch; at once when none comes), then boot a new process in its
 * place. Such a batch commits once the harness lets the row go, and the worker never saw its answer.
 */
export async function killWorker(ctx: FaultContext, fault: Extract<PlannedFault, { kind: 'kill' }>): Promise<FaultRecord> {
  const record: FaultRecord = { kind: 'kill', phase: ctx.phase, at: Date.now(), endAt: Date.now(), worker: fault.worker };
  if (!(await workerUp(ctx, fault.worker))) return { ...record, skipped: 'worker not up' };
  const { worker, inWindow } = fault.inWindow ? await cue(ctx, fault.worker) : await strike(ctx, fault.worker);
  try {
    const kill = async () => {
      Object.assign(record, { worker, inWindow, at: Date.now() });
      record.pid = await ctx.fleet.killWorker(worker);
    };
    const pid = ctx.fleet.workers[worker].current?.pid;
    if (inWindow || pid === undefined) await kill();
    else record.inBatch = (await strikeInABatch(ctx.db, `%:${pid}:%`, `application_name = 'chaos-worker:${pid}'`, kill)) ? 1 : 0;
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
