import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AsyncResource } from 'node:async_hooks';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DURABLE_OPTIONS } from '../durable.constants';
import { sweepBatchOf, type ResolvedDurableOptions } from '../durable-options';
import type { ResolvedQueue } from '../queues/queue-config';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { ClaimedRun, RunRepository } from '../persistence/run.repository';
import { QueueRepository } from '../persistence/queue.repository';
import { delay, settledWithin } from '../runtime/execution';
import { Executor } from '../runtime/executor';
import { Lease, leaseClock, LeaseInstant, LeaseTerms } from '../runtime/lease';
import { DbClock } from '../runtime/db-clock';
import { WakeTimer } from './wake-timer';
import { RunEnd, WakeBus } from '../runtime/wake-bus';
import { DurableTelemetry } from '../observability/durable-telemetry';

/**
 * This instance's worker: claims due runs while it has free slots, executes them, renews their
 * leases in one statement per interval, and gives them back on shutdown. Claims are nudged by
 * NOTIFY, by local starts and deliveries, by the sweeper, and by a slot freeing while work was left.
 */
@Injectable()
export class DurableWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** This instance's identity: the actor of worker transitions and the owner of its leases. */
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly logger = new Logger('DurableWorker');
  private readonly held = new Map<string, Lease>();
  private readonly executions = new Set<Promise<void>>();
  private reserved = 0;
  private accepting = false;
  private wanted = false;
  private readonly wantedFor = new Set<string>();
  /** Queues a new run entered: admission from these alone, when nothing else is wanted. */
  private readonly wantedQueues = new Set<string>();
  private saturated = false;
  /** Queues whose last admission left runs waiting for a slot: a slot freeing here admits from them. */
  private readonly queuesHeldBack = new Set<string>();
  private claiming?: Promise<void>;
  /**
   * Writes in flight that may claim a run for this instance (reserving): shutdown waits for them within
   * its grace, and the module's close (settled) for the rest, and the releases of what they claimed late.
   */
  private readonly reservations = new Set<Promise<unknown>>();
  /** Shutdown has taken its list of the leases to release: a run claimed from now on is released as it lands. */
  private releasing = false;
  private renewTimer?: NodeJS.Timeout;
  private renewing?: Promise<void>;
  /** A recheck waits for the renewal in flight, to send one of its own after it. */
  private recheckQueued = false;
  /** Shut down, its leases given back: no renewal (nor heartbeat) is sent any more. */
  private retired = false;
  private lastSweepAt?: Date;
  private sweepPending?: { at: Date; scheduled: boolean };
  /** Its instants are the database's (journaled from now()): measured on the database's clock as this process sees it. */
  private readonly wakeTimer = new WakeTimer(
    () => this.nudge(),
    () => this.clock.now(),
  );
  /**
   * The async context of the application's boot. Claim passes and executions run in it, not in the
   * context of whoever triggered them (a request that started, signalled or nudged): a run must not
   * see a request's AsyncLocalStorage stores (tenants, loggers) nor have its span as parent.
   */
  private readonly bootContext = new AsyncResource('nestjs-durable.worker');

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly runs: RunRepository,
    private readonly queues: QueueRepository,
    private readonly executor: Executor,
    private readonly registry: WorkflowRegistry,
    private readonly telemetry: DurableTelemetry,
    private readonly bus: WakeBus,
    private readonly clock: DbClock,
  ) {
    this.queueList = [...options.queues.values()];
    this.leaseTerms = { leaseMs: options.leaseMs, renew: () => this.renew() };
  }

  /** What each lease of this instance needs to know how long it surely holds, and to ask for a renewal. */
  private readonly leaseTerms: LeaseTerms;

  /** The module's queues, which each claim pass offers to admission when the plain claim left room. */
  private readonly queueList: ResolvedQueue[];

  get enabled(): boolean {
    return this.options.worker.enabled;
  }

  /** A renewal every third of a lease, so two can fail before it lapses. */
  private get renewEveryMs(): number {
    return Math.max(200, Math.floor(this.options.leaseMs / 3));
  }

  private get free(): number {
    return this.options.worker.concurrency - this.held.size - this.reserved;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.enabled) return;
    await this.queues.mendSlots(this.queueList);
    await this.warnOfUndeclaredQueues();
    this.accepting = true;
    this.renewTimer = setInterval(() => void this.renew(), this.renewEveryMs);
    this.renewTimer.unref();
    void this.renew();
    this.nudge();
  }

  /**
   * Warns of pending runs in queues this instance does not declare: a deploy that removed or renamed a
   * queue strands them (only an instance that declares it admits them). Advisory: a failure to look
   * does not stop the boot.
   */
  private async warnOfUndeclaredQueues(): Promise<void> {
    try {
      const stranded = await this.queues.undeclaredWithPending(this.queueList.map((q) => q.name));
      if (stranded.length)
        this.logger.warn(
          `Runs are pending in ${stranded.map((q) => `"${q}"`).join(', ')}, which this instance's \`queues\` option does not declare: only an instance that declares a queue admits its runs. If none does any more (a deploy removed or renamed it), declare it again or cancel the runs.`,
        );
    } catch (error) {
      this.logger.warn(`Could not look for runs pending in undeclared queues: ${(error as Error).message}`);
    }
  }

  /**
   * Asks for a claim pass soon; calls made while one runs are folded into one more pass. A nudge for
   * one run (a NOTIFY) needs no pass once that run executes here: the pass that claimed it is then
   * not followed by an empty one. Passes run in the boot context (see `bootContext`).
   */
  nudge(forRun?: string): void {
    if (!this.accepting) return;
    if (forRun === undefined) this.wanted = true;
    else if (this.isExecuting(forRun)) return;
    else this.wantedFor.add(forRun);
    this.claimPass();
  }

  /**
   * Asks for an admission pass of this queue soon (a run entered it). Alone, such a pass neither runs
   * the plain claim nor looks which other queues have work: a queued start costs the lock, the
   * admission and the commit.
   */
  nudgeQueue(queue: string): void {
    if (!this.accepting || !this.queueList.some((q) => q.name === queue)) return;
    this.wantedQueues.add(queue);
    this.claimPass();
  }

  private get anyWanted(): boolean {
    return this.wanted || this.wantedFor.size > 0 || this.wantedQueues.size > 0;
  }

  private claimPass(): void {
    this.claiming ??= this.bootContext
      .runInAsyncScope(() => this.claimWhileWanted())
      .finally(() => {
        this.claiming = undefined;
        // A nudge that came after the pass's last look found it still set and relied on it: honour it now.
        if (this.anyWanted && this.accepting) this.claimPass();
      });
  }

  /**
   * The sweeper's tick: a claim pass. Remembered for the operators' stats and the health check once that
   * pass succeeds, if the tick's schedule pass did (`scheduled`; true while one is still in flight, false for
   * a claim pass the listener asks for on reconnecting). A sweep that would count is not replaced by one that would not.
   */
  sweep(scheduled: boolean): void {
    if (this.sweepPending?.scheduled && !scheduled) return this.nudge();
    this.sweepPending = { at: new Date(), scheduled };
    this.nudge();
  }

  /**
   * A run this instance made due at `when` (a delayed start): a near instant gets a claim pass then,
   * a far one is left to the sweeper, which any instance runs.
   */
  wakeAt(when: Date): void {
    if (this.accepting) this.wakeTimer.at(when);
  }

  /** True while this instance executes the run (from its claim or local start to its end here). */
  isExecuting(runId: string): boolean {
    const lease = this.held.get(runId);
    return lease !== undefined && !lease.lost;
  }

  /** When a sweep last did its work here (undefined before the first that did). */
  get lastSweep(): Date | undefined {
    return this.lastSweepAt;
  }

  /**
   * Runs `write` holding a slot for a run it may claim for this instance (a start, or a delivery to a
   * parked run): `write` gets this instance's id as the owner to claim for, or null when `wanted` is
   * false or no slot is free. Afterwards the run it claimed executes here in that slot, or the slot is freed.
   */
  reserving<R>(wanted: boolean, write: (owner: string | null) => Promise<R>, claimedIn: (result: R) => ClaimedRun | undefined): Promise<R> {
    if (!(wanted && this.accepting && this.free > 0)) return write(null);
    this.reserved++;
    const sentAt = leaseClock();
    const reservation = (async () => {
      let claimed: ClaimedRun | undefined;
      try {
        const result = await write(this.id);
        claimed = claimedIn(result);
        return result;
      } finally {
        this.reserved--;
        if (claimed && this.releasing) await this.releaseLate(claimed);
        else if (claimed) this.spawn(claimed, sentAt);
        else this.slotFreed();
      }
    })();
    this.reservations.add(reservation);
    const forget = () => this.reservations.delete(reservation);
    void reservation.then(forget, forget);
    return reservation;
  }

  /**
   * Claims and executes everything due, again and again, until nothing is due and nothing executes
   * here, but queued runs their queue's limit holds back (a rate window is left for time to open: the
   * test clock's advance). For tests and scripts; a running application does this by itself.
   */
  async drain(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.nudge();
      await this.claiming;
      if (this.executions.size) {
        await Promise.allSettled([...this.executions]);
        continue;
      }
      if (!(await this.runs.countDue(this.registry.names(), [...this.queuesHeldBack]))) return;
      if (Date.now() > deadline)
        throw new Error(`drain() gave up after ${timeoutMs} ms: runs are still due (is the worker enabled, with free slots?).`);
      await delay(10); // due, but not claimable yet (a lease being released): look again shortly
    }
  }

  /** Stops local executions of runs whose lease another action took (a cancel made here). */
  revoke(runIds: Iterable<string>): void {
    for (const id of runIds) this.held.get(id)?.markLost('revoked');
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.enabled) return;
    this.accepting = false;
    await this.claiming;
    // A start or delivery claiming a run here as shutdown began: its run executes within the grace, or
    // is released below, like the others. Spawned after the release, it was leased here until expiry.
    // One whose write is held longer (a row lock) is released when it lands (reserving).
    const graceEnds = Date.now() + this.options.shutdownGraceMs; // one grace for both
    await settledWithin(this.settled(), this.options.shutdownGraceMs);
    if (this.executions.size) {
      await settledWithin(Promise.allSettled([...this.executions]), Math.max(0, graceEnds - Date.now()));
    }
    clearInterval(this.renewTimer);
    this.wakeTimer.stop();
    this.releasing = true;
    const left = [...this.held.values()];
    for (const lease of left) lease.markLost();
    const released = await this.runs
      .release(
        this.id,
        left.map((l) => ({ id: l.runId, token: l.token })),
      )
      .catch(() => 0);
    if (released) this.logger.log(`Released ${released} run(s) still executing at shutdown; another instance takes them over now.`);
    // Its workflows withdrawn last: a renewal still in flight (or one a late execution asks for) would name them again.
    this.retired = true;
    await this.renewing;
    await this.runs.retire(this.id).catch(() => undefined);
  }

  /**
   * Resolves once no write that may claim a run here is in flight, and what they claimed after shutdown
   * took its list is released. The module awaits it before it closes the pool, which would wait for
   * those writes' connections anyway, and refuse the releases after them.
   */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.reservations]);
  }

  /** Gives back a run a write claimed here after shutdown took its list of leases to release. */
  private async releaseLate(run: ClaimedRun): Promise<void> {
    try {
      await this.runs.release(this.id, [{ id: run.id, token: run.leaseToken }]);
    } catch (error) {
      this.logger.warn(`Could not release run ${run.id}, claimed as shutdown ended; its lease lapses: ${(error as Error).message}`);
    }
  }

  private async claimWhileWanted(): Promise<void> {
    const batch = sweepBatchOf(this.options);
    while (this.anyWanted && this.accepting) {
      // A pass asked for by new queued runs alone admits from their queues and claims nothing else.
      const plain = this.wanted || this.wantedFor.size > 0;
      const queues = plain ? this.queueList : this.queueList.filter((q) => this.wantedQueues.has(q.name));
      this.wanted = false;
      this.wantedFor.clear();
      this.wantedQueues.clear();
      for (;;) {
        const ask = Math.min(this.free, batch);
        // A pass of queues alone does not do a sweep's claim: the sweep waits for the plain pass it asked for.
        const sweep = plain ? this.sweepPending : undefined;
        if (plain) this.sweepPending = undefined;
        if (ask <= 0) {
          this.sweptAt(sweep); // no slot to claim for: a sweep with nothing it could do, not a failed one
          this.saturated = true;
          break;
        }
        let claimed: ClaimedRun[];
        const timer = this.telemetry.metrics?.claimPassDuration.startTimer({ trigger: sweep ? 'sweep' : 'wake' });
        const sentAt = leaseClock();
        try {
          claimed = plain ? await this.runs.claim(this.id, this.options.leaseMs, ask, this.registry.names()) : [];
          // What is left of the ask goes to the queues' admission (a queued run is never claimed above).
          if (claimed.length < ask && queues.length) {
            const admitted = await this.queues.admit(queues, this.id, this.options.leaseMs, ask - claimed.length, this.registry.names(), {
              probe: plain,
            });
            claimed.push(...admitted.claimed);
            for (const q of queues) this.queuesHeldBack.delete(q.name);
            for (const name of admitted.heldBack) this.queuesHeldBack.add(name);
          }
          timer?.();
          this.sweptAt(sweep);
        } catch (error) {
          this.logger.warn(`Claiming runs failed (the sweeper tries again): ${(error as Error).message}`);
          return;
        }
        // Local starts may have taken slots while the claim was in flight: give back what no longer fits.
        const room = Math.max(0, this.free);
        for (const run of claimed.slice(0, room)) this.spawn(run, sentAt);
        if (claimed.length > room) {
          const extra = claimed.slice(room).map((run) => ({ id: run.id, token: run.leaseToken }));
          await this.runs.release(this.id, extra).catch(() => undefined); // else their leases lapse and the sweeper takes them
          this.saturated = true;
          break;
        }
        if (claimed.length < ask || !this.accepting) break;
      }
      for (const id of this.wantedFor) if (this.isExecuting(id)) this.wantedFor.delete(id);
    }
  }

  private sweptAt(sweep: { at: Date; scheduled: boolean } | undefined): void {
    if (sweep?.scheduled) this.lastSweepAt = sweep.at;
  }

  /** Executes a run claimed for this instance by a statement sent at `sentAt`. */
  private spawn(run: ClaimedRun, sentAt: LeaseInstant): void {
    // This instance claimed back a run whose lease lapsed here (its renewals failed): the stale execution stops now.
    this.held.get(run.id)?.markLost('taken-over');
    const lease = new Lease(run.id, run.leaseToken, this.leaseTerms, sentAt);
    this.held.set(run.id, lease);
    let end: RunEnd | undefined;
    const execution = this.bootContext
      .runInAsyncScope(() => this.executor.execute(run, lease, this.id))
      .then((result) => {
        end = result.end;
        if (result.wakeAt) this.wakeTimer.at(result.wakeAt);
      })
      .catch((error) => this.logger.error(`Executing run ${run.id} failed: ${(error as Error).message}`, (error as Error).stack))
      .finally(() => {
        lease.close();
        if (this.held.get(run.id) === lease) this.held.delete(run.id);
        // A refused write not told apart counts too: a cancel elsewhere that no renewal found first.
        if ((lease.lost === 'taken-over' || lease.lost === 'refused') && this.accepting) this.telemetry.metrics?.leaseLosses.inc();
        this.executions.delete(execution);
        this.slotFreed();
        // Announced once the slot is free: a caller awaiting the result that starts its next run at
        // once finds a slot here and executes it at once, instead of leaving it to a claim.
        if (end) this.bus.finished(run.id, end);
      });
    this.executions.add(execution);
  }

  /**
   * A claim pass that found no free slot left work behind, or a queue held runs back at its limit:
   * an execution ended here, so there is a slot now (in this instance, and maybe in that queue).
   */
  private slotFreed(): void {
    for (const queue of this.queuesHeldBack) this.nudgeQueue(queue);
    this.queuesHeldBack.clear();
    if (!this.saturated) return;
    this.saturated = false;
    this.nudge();
  }

  /**
   * A run was changed while it executes (a cancel or a new deadline, named on the control channel):
   * when it executes here, a renewal sent after the change tells its execution now (a lost lease, the
   * stored deadline), not at the interval's next one. A renewal in flight may have read the run before
   * the change, so this one follows it; changes that come while one waits share it.
   */
  recheck(runId: string): void {
    // A lease lost already (revoked by this instance's own cancel) needs no renewal to tell it.
    if (this.held.get(runId)?.lost !== false || this.recheckQueued) return;
    this.recheckQueued = true;
    void (this.renewing ?? Promise.resolve()).then(() => {
      this.recheckQueued = false;
      return this.renew();
    });
  }

  /**
   * Renews this instance's leases now (an interval does it by itself). One renewal at a time: a call
   * made while one is in flight joins it.
   */
  renew(): Promise<void> {
    if (this.retired) return Promise.resolve();
    return (this.renewing ??= this.renewHeld().finally(() => (this.renewing = undefined)));
  }

  private async renewHeld(): Promise<void> {
    const snapshot = [...this.held.values()];
    const sentAt = leaseClock();
    try {
      const kept = await this.runs.renew(
        this.id,
        snapshot.map((l) => ({ id: l.runId, token: l.token })),
        this.options.leaseMs,
        {
          pid: process.pid,
          host: hostname(),
          executing: snapshot.length,
          concurrency: this.options.worker.concurrency,
          // What this instance executes, and whether it fires their schedules (its sweeper is on): a schedule
          // is flagged workflowMissing when no live instance fires it.
          workflows: this.registry.names(),
          sweeps: this.options.sweeper !== false,
        },
        this.lastSweepAt ?? null,
        this.renewEveryMs,
      );
      for (const lease of snapshot) {
        if (this.held.get(lease.runId) !== lease) continue; // its execution ended meanwhile: nothing to tell it
        const run = kept.get(lease.runId);
        if (run?.cancelled) {
          lease.markLost('revoked');
          continue;
        }
        if (run === undefined) {
          this.logger.warn(`Lost the lease of run ${lease.runId} (taken over); its execution stops.`);
          lease.markLost('taken-over');
          continue;
        }
        if (!run.running) continue; // its execution ended or parked it meanwhile, and closes the lease itself
        if (run.renewed) lease.renewed(sentAt);
        lease.readDeadline(run.deadline, sentAt);
      }
    } catch (error) {
      this.logger.warn(`Renewing leases failed (retrying before they lapse): ${(error as Error).message}`);
    }
  }
}
