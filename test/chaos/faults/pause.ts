import type { PlannedFault } from '../plan';
import { cue, FaultContext, FaultRecord, heldBy, strike, workerUp } from './fault';

/**
 * SIGSTOP a worker (at once, or the first one to enter a step's crash window) for longer than twice its lease, so
 * the others take its runs over, then SIGCONT:
 * its late writes (the rest of the steps it was running, their checkpoints, run ends) must all be
 * refused by the fencing token. The checker verifies the takeovers and the refusals.
 */
export async function pauseWorker(ctx: FaultContext, fault: Extract<PlannedFault, { kind: 'pause' }>): Promise<FaultRecord> {
  const record: FaultRecord = { kind: 'pause', phase: ctx.phase, at: Date.now(), endAt: Date.now(), worker: fault.worker };
  if (!(await workerUp(ctx, fault.worker))) return { ...record, skipped: 'worker not up' };
  const { worker, inWindow } = fault.inWindow ? await cue(ctx, fault.worker) : await strike(ctx, fault.worker);
  try {
    Object.assign(record, { worker, inWindow, at: Date.now() });
    record.pid = ctx.fleet.pauseWorker(worker);
    if (record.pid === undefined) return { ...record, skipped: 'worker not up' };
    record.held = await heldBy(ctx.db, record.pid);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, record.at + fault.durationMs - Date.now())));
    ctx.fleet.continueWorker(worker);
    record.endAt = Date.now();
    return record;
  } finally {
    ctx.fleet.workers[worker].struck = false;
  }
}
