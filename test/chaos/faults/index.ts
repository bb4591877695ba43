import { sleepUntil } from '../driver';
import type { PhasePlan, PlannedFault } from '../plan';
import { cutConnections } from './connections';
import type { FaultContext, FaultRecord } from './fault';
import { killWorker } from './kill';
import { pauseWorker } from './pause';
import { restartServer } from './restart';

export type { FaultContext, FaultRecord } from './fault';

function strike(ctx: FaultContext, fault: PlannedFault): Promise<FaultRecord> {
  switch (fault.kind) {
    case 'kill':
      return killWorker(ctx, fault);
    case 'pause':
      return pauseWorker(ctx, fault);
    case 'connections':
      return cutConnections(ctx, fault);
    case 'restart':
      return restartServer(ctx, fault);
  }
}

/** Strikes each planned fault at its time (they may overlap in a mixed phase); resolves when all are over. */
export async function runFaults(ctx: FaultContext, plan: PhasePlan, t0: number, log: (line: string) => void): Promise<FaultRecord[]> {
  return Promise.all(
    plan.faults.map(async (fault) => {
      await sleepUntil(t0 + fault.at);
      const record = await strike(ctx, fault);
      log(describe(record));
      return record;
    }),
  );
}

function describe(r: FaultRecord): string {
  const who = r.pid ? ` worker ${r.worker} (pid ${r.pid})` : '';
  if (r.skipped) return `${r.kind}${who}: skipped (${r.skipped})`;
  switch (r.kind) {
    case 'kill':
      return `kill${who}${r.inWindow ? ` inside the window of ${r.inWindow.runId} ${r.inWindow.stepKey}` : ''}, holding ${r.held?.length ?? 0} run(s)`;
    case 'pause':
      return `pause${who}${r.inWindow ? ` inside the window of ${r.inWindow.runId} ${r.inWindow.stepKey}` : ''} for ${r.endAt - r.at} ms, holding ${r.held?.length ?? 0} run(s)`;
    case 'connections':
      return `connections of the ${r.targets} cut: ${r.terminated} session(s); LISTEN back ${r.listenBackAt ? `after ${r.listenBackAt - r.endAt} ms` : 'NOT within 30 s'}`;
    case 'restart':
      return `server restarted, down ${r.endAt - r.at} ms; LISTEN back ${r.listenBackAt ? `after ${r.listenBackAt - r.endAt} ms` : 'NOT within 30 s'}`;
  }
}
