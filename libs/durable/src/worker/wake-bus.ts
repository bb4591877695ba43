import { Injectable } from '@nestjs/common';

type Listener = () => void;

/**
 * In-process events by run id: `wake` when something a run may wait for arrived (a signal, a message,
 * a child's end), `finished` when a run ended here. Inline waits and local `result()` calls listen;
 * the wake listener (NOTIFY) and this instance's own deliveries emit.
 */
@Injectable()
export class WakeBus {
  private readonly wakes = new Map<string, Set<Listener>>();
  private readonly finishes = new Map<string, Set<Listener>>();

  wake(runId: string): void {
    emit(this.wakes, runId);
  }

  finished(runId: string): void {
    emit(this.finishes, runId);
  }

  /** Resolves at the next wake of the run or after `ms`, whichever comes first. */
  nextWake(runId: string, ms: number): Promise<void> {
    return once(this.wakes, runId, ms);
  }

  /** Resolves when the run ends in this process or after `ms`. */
  nextFinish(runId: string, ms: number): Promise<void> {
    return once(this.finishes, runId, ms);
  }
}

function emit(map: Map<string, Set<Listener>>, runId: string): void {
  const listeners = map.get(runId);
  if (!listeners) return;
  map.delete(runId);
  for (const listener of listeners) listener();
}

function once(map: Map<string, Set<Listener>>, runId: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const listeners = map.get(runId) ?? new Set<Listener>();
    map.set(runId, listeners);
    const done = () => {
      clearTimeout(timer);
      listeners.delete(done);
      if (!listeners.size && map.get(runId) === listeners) map.delete(runId);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    listeners.add(done);
  });
}
