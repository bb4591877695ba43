import { Inject, Injectable } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { probeAbandonMs, sharedProbe } from '../observability/shared-probe';
import { DurableDatabase } from '../persistence/durable-database';
import { DURABLE_MIGRATIONS } from '../persistence/migrations';
import { DurableWorker } from '../worker/durable.worker';
import { WakeListener } from '../worker/wake-listener';

export interface DurableHealthReport {
  healthy: boolean;
  database: { up: boolean; error?: string };
  migrations: { up: boolean; pending: string[] };
  /** `disabled` on an instance whose worker is off (it listens for nothing). */
  listener: { up: boolean | 'disabled' };
  /** `lastSweepAt`: the last sweep whose claim pass succeeded, its schedule pass not failed. */
  sweeper: { up: boolean | 'disabled'; lastSweepAt: string | null };
}

/** How long the check waits for each of its probes: a database that hangs must read as down, not hang the probe. */
const PROBE_WAIT_MS = 2_000;

/**
 * Whether this instance can do its work: the database answers, the library's migrations are all
 * applied, the LISTEN session is alive, and the sweeper's passes succeed (each probe answers within two seconds). For a readiness probe; the terminus
 * indicator in `nestjs-durable/health` reports it.
 */
@Injectable()
export class DurableHealth {
  private readonly bootedAt = Date.now();
  /** Probes shared by concurrent checks (a readiness and a liveness probe): a hung database holds one query, not one per check. */
  private readonly migrationsApplied: () => Promise<{ up: boolean; error: string; applied: Set<string> } | null>;
  private readonly listening: () => Promise<boolean | null>;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly db: DurableDatabase,
    private readonly worker: DurableWorker,
    listener: WakeListener,
  ) {
    // An answer is not reused: a check reads the state now (a LISTEN session lost a moment ago).
    const probe = { waitMs: PROBE_WAIT_MS, abandonAfterMs: probeAbandonMs(options.statementTimeoutMs), reuseMs: 0 };
    this.migrationsApplied = sharedProbe(
      () =>
        db
          .query<{ name: string }>(`SELECT name FROM "${db.tables.schema}".migrations`)
          .then((rows) => ({ up: true, error: '', applied: new Set(rows.map((r) => r.name)) }))
          .catch((error: Error) => ({ up: false, error: error.message, applied: new Set<string>() })),
      probe,
    );
    this.listening = sharedProbe(() => listener.alive(), probe);
  }

  async check(): Promise<DurableHealthReport> {
    const working = this.worker.enabled;
    const [answer, listening] = await Promise.all([this.migrationsApplied(), working ? this.listening() : ('disabled' as const)]);
    const database = answer ?? { up: false, error: `no answer within ${PROBE_WAIT_MS} ms`, applied: new Set<string>() };
    const pending = database.up ? DURABLE_MIGRATIONS.map((m) => m.name).filter((name) => !database.applied.has(name)) : [];
    const listener = listening ?? false;
    const sweep = this.options.sweeper;
    const last = this.worker.lastSweep;
    // Ticking: a sweep that did its work within three intervals (the first one comes an interval after boot): its claim
    // pass succeeded, its schedule pass did or is still running. One whose claims fail or wait on a lock does not count.
    const sweeper = !working || !sweep ? ('disabled' as const) : Date.now() - (last?.getTime() ?? this.bootedAt) < 3 * sweep.intervalMs;
    const report: DurableHealthReport = {
      healthy: false,
      database: database.up ? { up: true } : { up: false, error: database.error },
      migrations: { up: database.up && pending.length === 0, pending },
      listener: { up: listener },
      sweeper: { up: sweeper, lastSweepAt: last?.toISOString() ?? null },
    };
    report.healthy = report.database.up && report.migrations.up && listener !== false && sweeper !== false;
    return report;
  }
}
