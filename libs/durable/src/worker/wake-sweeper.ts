import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableWorker } from './durable.worker';
import { DurableDatabase } from '../persistence/durable-database';
import { PARALLEL_TRANSACTIONS, SchedulePass } from './schedule-pass';
import { scheduleInterval, stopInterval } from './scheduled-interval';
import { DeadlineExpiry } from './deadline-expiry';

/**
 * The fallback that makes every wake certain: on an interval registered with @nestjs/schedule it
 * fires the due schedules, then claims due runs and runs whose lease lapsed; beside them it fails the
 * runs whose deadline passed before they began (queued, pending for a worker, or waiting for a delayed start). Its cost follows the due schedules and runs
 * (index ranges on next_fire_at, wake_at and deadline), not the number of waiting ones, but for one
 * read of every schedule once a lease (watchWorkflows).
 * When the next schedule is due before the next interval, one extra sweep is aimed at that instant
 * (one timer per instance, whatever the number of schedules), so a slot fires on time, not up to an
 * interval late.
 */
/** How long before an aimed sweep its connections are opened: time to open them, within pg-pool's idle timeout (10 s). */
const WARM_AHEAD_MS = 1_000;
/**
 * How soon a sweep looks again when a schedule is due already as its pass ends: a slot came due while
 * the pass ran (a busy machine), or another instance holds the schedule mid-fire (SKIP LOCKED passed it by).
 */
const DUE_AGAIN_MS = 100;

@Injectable()
export class WakeSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly worker: DurableWorker,
    private readonly schedules: SchedulePass,
    private readonly db: DurableDatabase,
    private readonly expiry: DeadlineExpiry,
  ) {}

  private readonly logger = new Logger('DurableSweeper');
  private firing?: Promise<void>;
  private expiring?: Promise<void>;
  private nextSlot?: NodeJS.Timeout;
  private warming?: NodeJS.Timeout;
  /** Shutdown began: a pass that ends now aims at nothing (its timers would fire on a closed pool). */
  private stopped = false;
  /** A schedule changed while a pass was in flight, which may have read the schedules before: a sweep follows it. */
  private changed = false;

  private get name(): string {
    return `nestjs-durable:sweeper:${this.options.schema}`;
  }

  onApplicationBootstrap(): void {
    const { sweeper } = this.options;
    if (!sweeper || !this.worker.enabled) return;
    scheduleInterval(this.scheduler, this.name, sweeper.intervalMs, () => this.tick());
    this.tick();
  }

  /**
   * A sweep now: a schedule was created or changed, and its first slot is aimed at without waiting for
   * the interval. With a pass in flight, another follows it: that one may have read the schedules before
   * the change, and aimed at none (the boot's first pass against the decorators' reconcile, say).
   */
  soon(): void {
    if (!this.options.sweeper || !this.worker.enabled) return;
    if (this.firing) this.changed = true;
    this.tick();
  }

  /**
   * One sweep: the schedule pass (one at a time here; a slow one is not stacked), then a claim pass;
   * once a lease, after the pass, the schedules' workflowMissing is decided again (watchWorkflows).
   * While a pass is still in flight the claim pass goes at once: waking does not wait on a slow
   * schedule read (the pass sweeps again when it ends, for the runs it started). Beside them, on every
   * sweep, the runs whose deadline passed before they began are failed.
   */
  private tick(): void {
    if (this.stopped) return;
    this.expireUnbegun();
    // A claim pass now. The pass in flight counts as going well (a crowd of due schedules takes seconds); one that fails does not.
    if (this.firing) return this.worker.sweep(true);
    let scheduled = true;
    this.firing = this.schedules
      .run()
      .then(
        (pass) => this.aimAt(pass.nextDueInMs),
        (error: Error) => {
          scheduled = false;
          this.logger.error(`The schedule pass failed; the next sweep tries again: ${error.stack ?? error}`);
        },
      )
      .then(() => (this.stopped ? undefined : this.schedules.watchWorkflows(this.options.leaseMs)))
      .catch((error: Error) => {
        scheduled = false;
        this.logger.error(`Deciding workflowMissing failed; a sweep a lease on tries again: ${error.stack ?? error}`);
      })
      .finally(() => {
        this.firing = undefined;
        if (!this.changed) return;
        this.changed = false;
        this.tick();
      });
    void this.firing.then(() => this.worker.sweep(scheduled));
  }

  /** The expiry's pass (DeadlineExpiry), one at a time: a slow one is not stacked. */
  private expireUnbegun(): void {
    if (this.expiring) return;
    this.expiring = this.expiry
      .run(() => this.stopped)
      .then(
        () => undefined,
        (error: Error) =>
          this.logger.error(
            `The pass that fails the runs past their deadline before they began failed; the next sweep tries again: ${error.stack ?? error}`,
          ),
      )
      .finally(() => (this.expiring = undefined));
  }

  /**
   * A sweep at the next schedule's instant, when the interval would come later (database time, so no
   * clock skew), and the connections of its pass opened a moment before it: at a crowd of due
   * schedules the pass's parallel transactions would otherwise open theirs at the slot.
   */
  private aimAt(nextDueInMs: number | null): void {
    const { sweeper } = this.options;
    if (this.stopped || !sweeper || nextDueInMs === null) return;
    const inMs = Math.max(nextDueInMs, DUE_AGAIN_MS);
    if (inMs >= sweeper.intervalMs) return;
    clearTimeout(this.nextSlot);
    clearTimeout(this.warming);
    this.nextSlot = setTimeout(() => this.tick(), Math.ceil(inMs));
    this.nextSlot.unref();
    if (nextDueInMs <= 0) return; // the pass that just ended has its connections open
    // A failed warm-up is left to the pass's transactions, which open their own connections.
    this.warming = setTimeout(
      () => void this.db.warm(PARALLEL_TRANSACTIONS).catch(() => undefined),
      Math.max(0, nextDueInMs - WARM_AHEAD_MS),
    );
    this.warming.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.nextSlot);
    clearTimeout(this.warming);
    stopInterval(this.scheduler, this.name);
    await Promise.all([this.firing, this.expiring]);
  }
}
