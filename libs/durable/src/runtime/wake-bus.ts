import { Injectable } from '@nestjs/common';
import type { ErrorInfo } from '../interfaces';

/** How a run ended, as the process that ended it knows it (so a local result() needs no read). */
export interface RunEnd {
  status: 'completed' | 'failed';
  output?: unknown;
  error?: ErrorInfo;
}

type Listener<T> = (value: T | undefined) => void;

/**
 * In-process events by run id: `wake` when something a run may wait for arrived (a signal, a message,
 * a child's end), `finished` when a run ended here. Inline waits and local `result()` calls listen;
 * the wake listener (NOTIFY) and this instance's own deliveries emit.
 */
@Injectable()
export class WakeBus {
  private readonly wakes = new Map<string, Set<Listener<void>>>();
  private readonly finishes = new Map<string, Set<Listener<RunEnd>>>();

  wake(runId: string): void {
    emit(this.wakes, runId, undefined);
  }

  finished(runId: string, end: RunEnd): void {
    emit(this.finishes, runId, end);
  }

  /** Resolves at the next wake of the run or after `ms`, whichever comes first. */
  async nextWake(runId: string, ms: number): Promise<void> {
    await once(this.wakes, runId, ms);
  }

  /** Resolves with the run's end when it ends in this process, or with undefined after `ms`. */
  nextFinish(runId: string, ms: number): Promise<RunEnd | undefined> {
    return once(this.finishes, runId, ms);
  }
}

function emit<T>(map: Map<string, Set<Listener<T>>>, runId: string, value: T): void {
  const listeners = map.get(runId);
  if (!listeners) return;
  map.delete(runId);
  for (const listener of listeners) listener(value);
}

function once<T>(map: Map<string, Set<Listener<T>>>, runId: string, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const listeners = map.get(runId) ?? new Set<Listener<T>>();
    map.set(runId, listeners);
    const done: Listener<T> = (value) => {
      clearTimeout(timer);
      listeners.delete(done);
      if (!listeners.size && map.get(runId) === listeners) map.delete(runId);
      resolve(value);
    };
    const timer = setTimeout(() => done(undefined), Math.max(0, ms));
    listeners.add(done);
  });
}
