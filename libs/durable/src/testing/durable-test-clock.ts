import type { DataSource } from 'typeorm';
import type { Duration } from '../interfaces';
import { toMs } from '../runtime/duration';
import type { Tables } from '../persistence/tables';

/**
 * Moves a test schema's durable time forward: every journaled instant ahead (sleeps, signal deadlines,
 * retry backoffs, wake times) is brought nearer by the step, which is what the passing of that time
 * would do. It advances from one wake to the next and lets each due run execute before going on, so
 * timers set by a run woken on the way fire in order too. Date.now() itself does not move.
 */
export class DurableTestClock {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tables: Tables,
    private readonly drain: () => Promise<void>,
  ) {}

  async advance(duration: Duration): Promise<void> {
    let remaining = toMs(duration, 'advance() duration');
    for (;;) {
      await this.drain();
      const next = await this.msToNextWake();
      if (next === null || next > remaining) {
        await this.shift(remaining);
        return this.drain();
      }
      await this.shift(next);
      remaining -= next;
    }
  }

  /** Milliseconds until the earliest future wake of a run that is not executing; null when none. */
  private async msToNextWake(): Promise<number | null> {
    const [row] = await this.dataSource.query(
      `SELECT ceil(extract(epoch FROM min(wake_at) - now()) * 1000)::bigint AS ms FROM ${this.tables.runs} WHERE status IN ('pending', 'waiting') AND wake_at > now()`,
    );
    return row.ms === null ? null : Math.max(0, Number(row.ms));
  }

  private async shift(ms: number): Promise<void> {
    if (ms <= 0) return;
    const t = this.tables;
    const back = `$1::bigint * interval '1 millisecond'`;
    const shifted = (iso: string) => `to_jsonb(((${iso})::timestamptz - ${back}))`;
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE ${t.runs}
         SET wake_at = wake_at - ${back},
             wait = CASE
               WHEN wait ? 'deadline' THEN jsonb_set(wait, '{deadline}', ${shifted(`wait->>'deadline'`)})
               WHEN wait ? 'until' THEN jsonb_set(wait, '{until}', ${shifted(`wait->>'until'`)})
               ELSE wait END
         WHERE status IN ('pending', 'waiting') AND wake_at IS NOT NULL`,
        [ms],
      );
      await manager.query(
        `UPDATE ${t.steps}
         SET result = json_build_object('$t', 'Date', 'v', to_char(((result::json->>'v')::timestamptz - ${back}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
         WHERE kind IN ('sleep', 'deadline')`,
        [ms],
      );
    });
  }
}
