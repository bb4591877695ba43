import type { Duration } from './duration.interface';
import type { ActorOptions, RunStatus } from './run.interface';

/** What a slot does while the schedule's last run is unfinished. */
export type ScheduleOverlap = 'skip' | 'bufferOne' | 'allow' | 'cancelOther';

/** ScheduleService.trigger's options. */
export interface TriggerOptions extends ActorOptions {
  /** Against an unfinished last run, this policy instead of the schedule's: 'allow' starts beside it, 'cancelOther' cancels it first. */
  overlap?: ScheduleOverlap;
  /**
   * The unfinished last run the caller saw (the one its `overlap` is meant for): when the schedule's last
   * run is now another unfinished one, the trigger refuses (ScheduleOverlapError naming that run) and
   * starts and cancels nothing, rather than apply the policy to a run the caller did not see.
   */
  expectLastRun?: string;
}

/** Why a slot started no run. */
export type ScheduleSkipReason = 'overlap' | 'missed' | 'paused';

/**
 * A durable cron schedule: each slot starts one run of the workflow, once across every instance. A field
 * left out takes its default; one given as null is refused.
 */
export interface ScheduleSpec {
  /** Unique across the app; the schedule's identity in the database and in its runs' ids. */
  name: string;
  /** 5 fields, or 6 with seconds first; an invalid one fails the boot (or create) naming the schedule. */
  cron: string;
  /** IANA zone the cron is read in; default 'UTC'. */
  timezone?: string;
  /** A slot while the last run is unfinished; default 'skip'. */
  overlap?: ScheduleOverlap;
  /** After downtime, missed slots younger than this may still run; default '1m', at least '10s'. */
  catchupWindow?: Duration;
  /** Which of the slots inside the window run: the latest (default) or all; the rest are recorded as 'missed'. */
  catchup?: 'latest' | 'all';
  /** Default {}; a run's input is { ...input, scheduledAt }. */
  input?: unknown;
  /** Each slot's start is delayed by a stable pseudo-random amount up to this, cut to before the next slot. */
  jitter?: Duration;
  /** The initial state only; a pause or resume made later is kept in the database. */
  paused?: boolean;
}

/** The input a scheduled run receives, beside the schedule's own `input`. */
export type ScheduledInput = { scheduledAt: Date };

/** A schedule as stored, with what an operator needs to see. */
export interface ScheduleView {
  name: string;
  workflow: string;
  cron: string;
  timezone: string;
  overlap: ScheduleOverlap;
  catchupWindow: number;
  catchup: 'latest' | 'all';
  input: unknown;
  jitter: number;
  paused: boolean;
  source: 'decorator' | 'api';
  /**
   * No live instance executes its workflow (decided at boot and by every worker's sweeper once a lease):
   * the schedule is kept and held, its slots starting nothing and recorded as nothing, until an instance
   * executes it again; its catch-up policy then decides the slots it missed. `paused` reads true
   * meanwhile; an operator's pause (a paused schedule's slots are recorded skipped) is kept under it.
   */
  workflowMissing: boolean;
  /**
   * An operator's pause (`pause()`, or the spec's `paused`), held or not: what `resume()` clears. Equal to
   * `paused` unless held, when it tells whether the schedule stays paused once its workflow is back.
   */
  operatorPaused: boolean;
  /** The next 5 slots after the last one fired, or after now while held (none when the cron has no more). */
  nextFireTimes: Date[];
  lastRun?: { runId: string; status: RunStatus; scheduledAt: Date };
  /** Slots recorded as skipped (overlap, missed, paused). */
  skippedCount: number;
}

/** One slot that started no run. */
export interface ScheduleSkip {
  slot: Date;
  reason: ScheduleSkipReason;
  at: Date;
}
