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
  /** How many wakes came so far: taken before a read, it tells the wait after that read what the read may have missed. */
  mark(): number;
  /** Resolves at once when a wake came since `since` (a `mark`), else at the next wake, or after `ms`. */
  next(ms: number, since: number): Promise<void>;
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
   * Execution.wakeCursor). A wait is answered by any wake since its caller's mark, taken before the read
   * that preceded it: a wake that came while the caller read (or executed a step) ends its wait at once,
   * where a listener taken at the wait would miss it and wait out its time. Waits side by side (the
   * handles of one `all`, the arms of a Promise.all) each get their own answer from one wake.
   */
  watch(runId: string): WakeWatch {
    const { wakes } = this;
    let count = 0;
    const pending = new Set<() => void>();
    const answerAll = () => {
      for (const answer of [...pending]) answer();
    };
    const listen = () => {
      const listeners = wakes.get(runId) ?? new Set<Listener<void>>();
      wakes.set(runId, listeners);
      listeners.add(listener);
    };
    // emit takes the run's listeners off the bus before calling them: a watch listens again at once.
    const listener: Listener<void> = () => {
      listen();
      count++;
      answerAll();
    };
    listen();
    return {
      mark: () => count,
      next: (ms, since) =>
        new Promise<void>((resolve) => {
          if (count !== since) return resolve();
          const answer = () => {
            clearTimeout(timer);
            pending.delete(answer);
            resolve();
          };
          const timer = setTimeout(answer, Math.max(0, ms));
          pending.add(answer);
        }),
      close: () => {
        const listeners = wakes.get(runId);
        listeners?.delete(listener);
        if (listeners && !listeners.size) wakes.delete(runId);
        answerAll();
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
