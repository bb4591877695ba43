/** The clock leases are timed by: monotonic, so that a step of the wall clock cannot make a lapsed lease look fresh. */
export const leaseClock = (): number => performance.now();

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
export class Lease {
  private lostFlag = false;
  private closed = false;
  private holdsUntil: number;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly runId: string,
    readonly token: string,
    private readonly terms: LeaseTerms,
    claimSentAt = leaseClock(),
  ) {
    this.holdsUntil = claimSentAt + terms.leaseMs;
  }

  get lost(): boolean {
    return this.lostFlag;
  }

  /** How many listeners wait on this lease (one per live execution holding it). */
  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Whether the lease surely holds for a third of its length more: long enough to begin a step. */
  get fresh(): boolean {
    return this.holdsUntil - leaseClock() >= this.terms.leaseMs / 3;
  }

  /** A renewal sent at `sentAt` (by leaseClock) moved this lease on. */
  renewed(sentAt: number): void {
    this.holdsUntil = Math.max(this.holdsUntil, sentAt + this.terms.leaseMs);
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
      await new Promise((resolve) => setTimeout(resolve, this.terms.leaseMs / 12));
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

  markLost(): void {
    if (this.lostFlag) return;
    this.lostFlag = true;
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }

  /** The worker no longer holds it (the run's executions are over): a step still confirming it gives up. */
  close(): void {
    this.closed = true;
  }
}
