import type { EntityManager } from 'typeorm';
import type { Duration } from './duration.interface';

export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface ErrorInfo {
  name: string;
  message: string;
}

/** Why a waiting run waits. */
export type WaitReason =
  | { kind: 'signal'; name: string; since: Date; deadline?: Date }
  | { kind: 'sleep'; name: string; until: Date; since: Date }
  | { kind: 'channel'; channel: string; since: Date }
  | { kind: 'child'; childRunId: string; step: string; since: Date }
  | { kind: 'retry'; until: Date; error: ErrorInfo; since: Date };

/** A run as the client and the dashboard see it. */
export interface RunView {
  runId: string;
  workflow: string;
  status: RunStatus;
  input: unknown;
  output?: unknown;
  error?: ErrorInfo;
  waiting?: WaitReason;
  /** The latest execution's `ctx.attempt`. */
  attempt: number;
  parentRunId?: string;
  createdAt: Date;
  updatedAt: Date;
  finishedAt?: Date;
}

export interface RunFilter {
  status?: RunStatus | RunStatus[];
  workflow?: string;
  waitingFor?: WaitReason['kind'];
  /** Page size, 1 to 500 (default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** Join the caller's TypeORM transaction: the write commits or rolls back with it. */
export interface TxOptions {
  manager?: EntityManager;
}

export interface RunHandle<O> {
  readonly runId: string;
  /** False when the run existed already (an idempotent start). */
  readonly created: boolean;
  /** The output; rejects with RunFailedError or CancelledError. */
  result(opts?: { timeout?: Duration }): Promise<O>;
  status(): Promise<RunStatus>;
}

/** Who did it, for the run's history (default `'api'`); the dashboard passes the operator. */
export interface ActorOptions {
  actor?: string;
}

export interface SignalDelivery {
  runId: string;
  name: string;
  /** False for a redelivery: nothing was recorded, the first payload stands. */
  accepted: boolean;
  deliveredAt: Date;
}

export interface MessageDelivery {
  runId: string;
  channel: string;
  key: string;
  /** False for a redelivery of the key: nothing was recorded. */
  accepted: boolean;
  seq: number;
}
