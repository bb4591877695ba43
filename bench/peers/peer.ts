import type { GroupCommitOptions } from 'nestjs-durable';

/** The systems measured side by side, and the Postgres insert ceiling they all sit under. */
export type PeerKind = 'ours' | 'dbos' | 'floor' | 'ceiling';

/** How a peer process is set up; travels to the child process as JSON. */
export interface PeerSpec {
  kind: PeerKind;
  /** The peer's own database on the shared server. */
  url: string;
  /** Runs executing at once (ours: worker concurrency; the others: connection pool size follows it). */
  concurrency: number;
  /** false: this instance only delivers signals (ours: worker disabled; DBOS: a DBOSClient). */
  worker?: boolean;
  /** DBOS only: its system database pool (unset: its default). */
  pool?: number;
  /** ours only. */
  inlineWaitMs?: number;
  schema?: string;
  sweeperMs?: number;
  /** ours only: the module's groupCommit option (unset: its default). */
  groupCommit?: GroupCommitOptions | false;
}

/**
 * One system as the scenarios drive it. Every scenario calls the same members on every peer, so
 * the measuring code is written once; a peer lacking a capability leaves the member out.
 */
export interface Peer {
  /** One unit of work, started and awaited: a 3-step workflow (the ceiling: one single-row insert). */
  runOnce(): Promise<unknown>;
  /** The same 3-step workflow through a queue `bench` whose concurrency is the worker's: what flow control costs. */
  runQueued?(): Promise<unknown>;
  /** A run waiting for the signal `go`, driven from this process or another. */
  waiting?: WaitingRuns;
  /** Starts a run that sleeps `ms` and resolves, when it wakes, to how late it woke (ms). */
  sleepLateness?(ms: number): Promise<number>;
  /**
   * Starts `count` runs that take a step and park on `go` with a day's timeout, keyed by `group`;
   * resolves once started (they park as the worker gets to them). ours only: the memory figure.
   */
  park?(count: number, group: string): Promise<void>;
  /** Delivers `go` to the `count` runs `park` started in `group`, by key; they complete as the worker gets to them. */
  wake?(count: number, group: string): Promise<void>;
  /** A parent that starts `children` 3-step children and awaits them all. */
  fanOut?(children: number): Promise<{ spawnMs: number; totalMs: number }>;
  close(): Promise<void>;
}

export interface WaitingRuns {
  /** Starts a run and resolves once it waits for `go` (with `select`, in a select of `go` and a timer; ours only). */
  start(select?: boolean): Promise<string>;
  /** Resolves when the run has completed, as its starter sees it. */
  result(runId: string): Promise<unknown>;
  /** Delivers `go` to the run. */
  deliver(runId: string): Promise<void>;
}
