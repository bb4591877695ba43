/**
 * An instant as leases time it, by two clocks: the monotonic one stops while the machine sleeps
 * (suspend, some VM pauses) and the wall clock can be stepped back, while the server counts on. A
 * lease holds for the lesser of the two times left, so neither can make a lapsed lease look fresh.
 */
export interface LeaseInstant {
  mono: number;
  wall: number;
}
export const leaseClock = (): LeaseInstant => ({ mono: performance.now(), wall: Date.now() });

/** How the worker keeps a lease: its length, and a renewal of this instance's leases (one in flight at a time). */
export interface LeaseTerms {
  leaseMs: number;
  renew: () => Promise<void>;
}

/**
 * The right to execute one run, proven by the token taken at claim. When a renewal finds the token
 * replaced (another worker took the run over, or it was cancelled) the lease is lost and the
 * execution holding it stops at once.
 *
 * It also knows how long it surely holds: until a lease's length after the claim or the last renewal
 * that moved it on was sent (the server counts from later). A renewal can miss its beat without an
 * error: the process stalled, the server was slow, or the run's row was locked and the renewal
 * skipped it. The lease may then lapse and be taken over while this execution still runs, and a step
 * begun after that runs twice. So a step begins only on a lease that holds for a third of its length
 * more (`fresh`), else it asks for a renewal first (`confirm`).
 */
/**
 * How a lease was lost: taken over (another worker's claim after it lapsed), revoked (the run cancelled),
 * or refused (a write found the token replaced: one of the two, until a renewal or this instance's
 * cancel tells which).
 */
export type LeaseLoss = 'taken-over' | 'revoked' | 'refused';

export class Lease {
  private lostFlag: LeaseLoss | false = false;
  private closed = false;
  private holdsUntil: LeaseInstant;
  private readonly listeners = new Set<() => void>();
  private readonly deadlineListeners = new Set<(deadline: Date | null, sentAt: LeaseInstant) => void>();

  constructor(
    readonly runId: string,
    readonly token: string,
    private readonly terms: LeaseTerms,
    claimSentAt = leaseClock(),
  ) {
    this.holdsUntil = this.after(claimSentAt);
  }

  /** False while held; else how it was lost. */
  get lost(): LeaseLoss | false {
    return this.lostFlag;
  }

  /** How many listeners wait on this lease (two per live execution holding it: its loss, its deadline). */
  get listenerCount(): number {
    return this.listeners.size + this.deadlineListeners.size;
  }

  /** Whether the lease is still held, surely for a third of its length more: long enough to begin a step. */
  get fresh(): boolean {
    if (this.lostFlag || this.closed) return false;
    const now = leaseClock();
    return Math.min(this.holdsUntil.mono - now.mono, this.holdsUntil.wall - now.wall) >= this.terms.leaseMs / 3;
  }

  /** A renewal sent at `sentAt` moved this lease on. */
  renewed(sentAt: LeaseInstant): void {
    if (sentAt.mono + this.terms.leaseMs > this.holdsUntil.mono) this.holdsUntil = this.after(sentAt);
  }

  private after(sentAt: LeaseInstant): LeaseInstant {
    return { mono: sentAt.mono + this.terms.leaseMs, wall: sentAt.wall + this.terms.leaseMs };
  }

  /**
   * Renews until the lease is fresh (true), or it is lost or no execution holds it any more (false).
   * Between tries (the run's row locked, the server away) it waits a twelfth of a lease.
   */
  async confirm(): Promise<boolean> {
    for (;;) {
      if (this.lostFlag || this.closed) return false;
      if (this.fresh) return true;
      await this.terms.renew();
      if (this.lostFlag || this.closed || this.fresh) continue;
      // Unref'd: a lease no renewal reaches must not keep a process that is shutting down alive.
      await new Promise((resolve) => setTimeout(resolve, this.terms.leaseMs / 12).unref());
    }
  }

  /**
   * Calls `listener` when the lease is lost (at once if it is already). Returns the unsubscribe: an
   * execution that ends calls it, so a lease held through many executions keeps none of the ended ones.
   */
  onLost(listener: () => void): () => void {
    if (this.lostFlag) listener();
    else this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` with the run's stored deadline each time a renewal reads it, and the instant that
   * renewal was sent (an execution ignores one sent before it loaded its journal). Returns the unsubscribe.
   */
  onDeadline(listener: (deadline: Date | null, sentAt: LeaseInstant) => void): () => void {
    this.deadlineListeners.add(listener);
    return () => this.deadlineListeners.delete(listener);
  }

  /** A renewal sent at `sentAt` read the run's stored deadline. */
  readDeadline(deadline: Date | null, sentAt: LeaseInstant): void {
    for (const listener of this.deadlineListeners) listener(deadline, sentAt);
  }

  /** A refused loss is told which it was by a later call (a cancel here whose lock the refused write had waited on). */
  markLost(how: LeaseLoss = 'refused'): void {
    if (this.lostFlag) {
      if (this.lostFlag === 'refused') this.lostFlag = how;
      return;
    }
    this.lostFlag = how;
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }

  /** The worker no longer holds it (the run's executions are over): a step still confirming it gives up. */
  close(): void {
    this.closed = true;
  }
}
