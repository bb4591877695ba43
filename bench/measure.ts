import { performance } from 'node:perf_hooks';

/** What one closed loop did: how many operations completed, over how long, and each one's latency. */
export interface LoopResult {
  completed: number;
  elapsedMs: number;
  perSecond: number;
  latenciesMs: number[];
}

/**
 * The one measuring loop of the suite: `concurrency` callers, each starting the next operation as
 * soon as its previous one returned, until `durationMs` has passed or `count` operations were started.
 * Every system is measured through it, in its own process, so they differ only in `op`.
 * An operation that throws fails the loop: a figure made of errors is not a figure.
 */
export async function closedLoop(
  op: () => Promise<unknown>,
  opts: { concurrency: number; durationMs?: number; count?: number },
): Promise<LoopResult> {
  const latenciesMs: number[] = [];
  const start = performance.now();
  const end = opts.durationMs === undefined ? Infinity : start + opts.durationMs;
  let started = 0;
  const more = () => performance.now() < end && (opts.count === undefined || started < opts.count);
  const caller = async () => {
    while (more()) {
      started++;
      const t0 = performance.now();
      await op();
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, caller));
  const elapsedMs = performance.now() - start;
  return { completed: latenciesMs.length, elapsedMs, perSecond: (latenciesMs.length * 1000) / elapsedMs, latenciesMs };
}

/** Wall-clock milliseconds comparable across processes on one machine (epoch-based, sub-millisecond). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `everyMs` until it is true; throws with `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000, everyMs = 2): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(everyMs);
  }
}
