import { Injectable } from '@nestjs/common';
import type { ErrorInfo } from '../interfaces';

/** How a run ended, as the process that ended it knows it (so a local result() needs no read). */
export interface RunEnd {
  status: 'completed' | 'failed';
  output?: unknown;
  error?: ErrorInfo;
}

type Listener<T> = (value: T | undefined) => void;

/** The wakes of one run from `watch` on: see WakeBus.watch. */
export interface WakeWatch {
  /** Resolves at the first wake since the last one it answered (at once if one came meanwhile), or after `ms`. */
  next(ms: number): Promise<void>;
  close(): void;
}

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

  /**
   * The run's wakes from now until `close`, for an execution from its start to its end (see
   * Execution.nextWake): a wake that comes while no wait is pending (the run executes a step, or a
   * wait reads between its waits) is kept for its next wait, where a listener taken at the wait would
   * miss it and wait out its time.
   */
  watch(runId: string): WakeWatch {
    const { wakes } = this;
    let woken = false;
    let answer: (() => void) | undefined;
    const listen = () => {
      const listeners = wakes.get(runId) ?? new Set<Listener<void>>();
      wakes.set(runId, listeners);
      listeners.add(listener);
    };
    // emit takes the run's listeners off the bus before calling them: a watch listens again at once.
    const listener: Listener<void> = () => {
      listen();
      if (answer) answer();
      else woken = true;
    };
    listen();
    return {
      next: (ms) =>
        new Promise<void>((resolve) => {
          if (woken) {
            woken = false;
            return resolve();
          }
          const timer = setTimeout(() => answer?.(), Math.max(0, ms));
          answer = () => {
            clearTimeout(timer);
            answer = undefined;
            resolve();
          };
        }),
      close: () => {
        const listeners = wakes.get(runId);
        listeners?.delete(listener);
        if (listeners && !listeners.size) wakes.delete(runId);
        answer?.();
      },
    };
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
