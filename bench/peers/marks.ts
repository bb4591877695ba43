import { performance } from 'node:perf_hooks';

/**
 * Points a workflow reaches, noted in process memory for the bench to read: the first time a run
 * got somewhere (a re-execution after a park must not move it) and values a run hands back at a
 * point (how late its sleep woke). Workflows and the peer that awaits them share one process.
 */
export class Marks<T = number> {
  private readonly firsts = new Map<string, number>();
  private readonly values = new Map<string, T>();
  private readonly waiters = new Map<string, (value: T) => void>();

  /** performance.now() of the first call for `key`; later calls return that same instant. */
  first(key: string): number {
    let at = this.firsts.get(key);
    if (at === undefined) this.firsts.set(key, (at = performance.now()));
    return at;
  }

  /** Hands `value` to whoever waits for `key`, now or later; the run is done with `key`. */
  put(key: string, value: T): void {
    this.firsts.delete(key);
    const waiter = this.waiters.get(key);
    if (waiter) {
      this.waiters.delete(key);
      waiter(value);
    } else if (!this.values.has(key)) {
      this.values.set(key, value); // the first wins: a re-execution after a park reaches the point again
    }
  }

  /** The value put for `key`, once it is. */
  take(key: string): Promise<T> {
    if (this.values.has(key)) {
      const value = this.values.get(key) as T;
      this.values.delete(key);
      return Promise.resolve(value);
    }
    return new Promise((resolve) => this.waiters.set(key, resolve));
  }
}
