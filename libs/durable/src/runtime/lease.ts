/**
 * The right to execute one run, proven by the token taken at claim. When a renewal finds the token
 * replaced (another worker took the run over, or it was cancelled) the lease is lost and the
 * execution holding it stops at once.
 */
export class Lease {
  private lostFlag = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly runId: string,
    readonly token: string,
  ) {}

  get lost(): boolean {
    return this.lostFlag;
  }

  /** How many listeners wait on this lease (one per live execution holding it). */
  get listenerCount(): number {
    return this.listeners.size;
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
}
