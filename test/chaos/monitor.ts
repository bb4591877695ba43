import type { Cluster } from './cluster';
import type { HarnessDb } from './db';
import { listeners } from './faults/fault';
import type { Fleet } from './fleet';

/** One look at the LISTEN sessions: how many, and how many workers were up to hold one. */
export interface ListenSample {
  at: number;
  listeners: number;
  up: number;
}

/** A run found overdue twice in a row, twice the sweep interval apart, with all workers up. */
export interface StuckRun {
  at: number;
  runId: string;
  status: string;
  overdueMs: number;
  wait: unknown;
}

const SAMPLE_MS = 100;

/**
 * Watches the fleet while the schedule runs: the LISTEN sessions over time (the checker tells wakes
 * with LISTEN up from wakes left to the sweeper), and, at quiet moments, runs left overdue.
 */
export class Monitor {
  readonly samples: ListenSample[] = [];
  readonly stuck: StuckRun[] = [];
  quietChecks = 0;
  private timer?: NodeJS.Timeout;
  private sampling = false;

  constructor(
    private readonly db: HarnessDb,
    private readonly fleet: Fleet,
    private readonly cluster: Cluster,
    private readonly sweepMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * With every worker up and the server up: runs due more than twice the sweep interval ago, still
   * there with the same wake time twice the sweep interval later (two sweeps of every worker missed them).
   */
  async quietCheck(): Promise<StuckRun[]> {
    this.quietChecks++;
    const overdue = () =>
      this.db.query<{ id: string; status: string; wake_at: Date; wait: unknown; overdue_ms: number }>(
        `SELECT id, status, wake_at, wait, (extract(epoch FROM now() - wake_at) * 1000)::int AS overdue_ms FROM durable.runs
         WHERE status IN ('pending', 'waiting') AND wake_at < now() - $1 * interval '1 millisecond'`,
        [2 * this.sweepMs],
      );
    const first = await overdue();
    if (!first.length) return [];
    await new Promise((resolve) => setTimeout(resolve, 2 * this.sweepMs));
    const again = new Map((await overdue()).map((r) => [r.id, r]));
    const found = first
      .filter((r) => again.get(r.id)?.wake_at.getTime() === r.wake_at.getTime())
      .map((r) => ({ at: Date.now(), runId: r.id, status: r.status, overdueMs: again.get(r.id)!.overdue_ms, wait: r.wait }));
    this.stuck.push(...found);
    return found;
  }

  private async sample(): Promise<void> {
    if (this.sampling || !this.cluster.up) return;
    this.sampling = true;
    try {
      const at = Date.now();
      this.samples.push({ at, listeners: await listeners(this.db, 1), up: this.fleet.upWorkers });
    } catch {
      // the server went down meanwhile: no sample
    } finally {
      this.sampling = false;
    }
  }
}
