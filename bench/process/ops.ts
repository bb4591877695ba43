import { closedLoop, delay, epochMs } from '../measure';
import type { Peer, WaitingRuns } from '../peers/peer';
import { queryCounts } from './query-counter';

const armed = new Map<string, Promise<number>>();

function need<T>(capability: T | undefined, what: string): T {
  if (!capability) throw new Error(`this peer cannot ${what}`);
  return capability;
}
const waiting = (peer: Peer): WaitingRuns => need(peer.waiting, 'wait for signals');

/**
 * What a peer process does on request. Each operation runs next to the system it measures and takes
 * its timestamps there; the parent only orchestrates, so IPC never sits inside a measured interval.
 */
export const ops = {
  loop: (peer: Peer, args: { concurrency: number; durationMs?: number; count?: number }) => closedLoop(() => peer.runOnce(), args),
  queuedLoop: (peer: Peer, args: { concurrency: number; durationMs?: number }) => {
    const run = need(peer.runQueued, 'run through a queue').bind(peer);
    return closedLoop(() => run(), args);
  },

  startWaiting: (peer: Peer, args: { select: boolean }) => waiting(peer).start(args.select),
  /** Begins awaiting the run's result here, before anyone delivers; `collect` returns when it arrived. */
  arm: async (peer: Peer, args: { runId: string }) => {
    armed.set(args.runId, waiting(peer).result(args.runId).then(epochMs));
    await delay(10);
  },
  collect: (_peer: Peer, args: { runId: string }) => {
    const done = armed.get(args.runId);
    armed.delete(args.runId);
    return need(done, `collect run ${args.runId}, which was never armed`);
  },
  /** Returns the instant just before delivery. */
  deliver: async (peer: Peer, args: { runId: string }) => {
    const t0 = epochMs();
    await waiting(peer).deliver(args.runId);
    return t0;
  },

  sleepLateness: (peer: Peer, args: { ms: number; runs: number }) => {
    const sleep = need(peer.sleepLateness, 'sleep').bind(peer);
    return Promise.all(Array.from({ length: args.runs }, () => sleep(args.ms)));
  },
  park: (peer: Peer, args: { count: number; group: string }) => need(peer.park, 'park runs').call(peer, args.count, args.group),
  wake: (peer: Peer, args: { count: number; group: string }) => need(peer.wake, 'wake parked runs').call(peer, args.count, args.group),
  fanOut: (peer: Peer, args: { children: number }) => need(peer.fanOut, 'fan out').call(peer, args.children),

  /** After a full collection (the process runs with --expose-gc). */
  memory: () => {
    global.gc?.();
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    return { rss, heapUsed, heapTotal, external };
  },
  queryCounts: (_peer: Peer, args: { reset: boolean }) => queryCounts(args.reset),
  /** This process' CPU time so far, in microseconds. */
  cpuUsage: () => process.cpuUsage(),
};

export type Ops = typeof ops;
export type OpName = keyof Ops;
export type OpArgs<K extends OpName> = Parameters<Ops[K]> extends [Peer, infer A, ...unknown[]] ? A : undefined;
export type OpResult<K extends OpName> = Awaited<ReturnType<Ops[K]>>;
