import type { PlannedFault } from '../plan';
import { FaultContext, FaultRecord, listenBack } from './fault';

/** Stops the PostgreSQL server mid-flight (fast shutdown) and starts it again on the same port and data. */
export async function restartServer(ctx: FaultContext, fault: Extract<PlannedFault, { kind: 'restart' }>): Promise<FaultRecord> {
  const at = Date.now();
  const { startedAt } = await ctx.cluster.restart(fault.downMs);
  const record: FaultRecord = { kind: 'restart', phase: ctx.phase, at, endAt: startedAt };
  record.listenBackAt = await listenBack(ctx);
  return record;
}
