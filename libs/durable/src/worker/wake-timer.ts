/** Wakes further ahead than this are left to the sweeper: a million long sleeps hold no timers. */
const HORIZON_MS = 60_000;
/** At most this many near wakes are remembered; beyond it the sweeper covers. */
const MAX_PENDING = 10_000;

/**
 * One timer for the near wakes this instance knows of (runs it parked or set to back off), so a
 * 300 ms sleep wakes on time instead of at the next sweep. Far wakes are not tracked at all. The
 * instants are the database's, and `now` is the database's clock as this process sees it (DbClock):
 * on the process's own clock, a few ms ahead of the database's, the timer fired before the wake was
 * due, the claim found nothing, and the run waited for the sweep.
 */
export class WakeTimer {
  private readonly pending: number[] = [];
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;

  constructor(
    private readonly onDue: () => void,
    private readonly now: () => number,
  ) {}

  at(when: Date, now = this.now()): void {
    const at = when.getTime();
    if (at - now > HORIZON_MS || this.pending.length >= MAX_PENDING) return;
    this.pending.splice(sortedIndex(this.pending, at), 0, at);
    this.arm(now);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.pending.length = 0;
  }

  private arm(now: number): void {
    const next = this.pending[0];
    if (next === undefined || next >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(() => this.fire(), Math.max(0, next - now));
    this.timer.unref();
  }

  private fire(): void {
    this.timerAt = Infinity;
    const now = this.now();
    while (this.pending.length && this.pending[0] <= now) this.pending.shift();
    this.onDue();
    this.arm(now);
  }
}

function sortedIndex(list: number[], value: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (list[mid] < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
