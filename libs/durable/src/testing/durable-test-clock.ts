import type { DataSource } from 'typeorm';
import type { Duration } from '../interfaces';
import { toMs } from '../schema/duration';
import { clockMovesSql } from '../persistence/sql/wait-kinds.sql';
import { isoInstantSql } from '../persistence/sql/iso-instant.sql';
import type { Tables } from '../persistence/tables';
import type { RateWindows } from '../queues/queue-config';
import { WAIT_KINDS, waitKindsWhere } from '../wait-kinds/wait-kind.registry';
import type { DbClock } from '../runtime/db-clock';

/** The instants in the reasons of the kinds the clock moves. */
const MOVED_FIELDS = [...new Set(waitKindsWhere((kind) => kind.clock).flatMap((kind) => Object.keys(WAIT_KINDS[kind].times)))];

/**
 * Moves a test schema's durable time forward: every journaled instant ahead (sleeps, signal deadlines,
 * retry backoffs, wake times of the wait kinds the registry lets the clock move, run deadlines) is brought nearer by the step, which is what the passing of that time
 * would do. It advances from one wake to the next and lets each due run execute before going on, so
 * timers set by a run woken on the way fire in order too. Schedules' time moves with it (their slots
 * fire on the way, in order), and so do debounces' caps and queues' rate windows (a window opens on
 * the way when its oldest start leaves it). Date.now() itself does not move.
 */
export class DurableTestClock {
  /**
   * Pending runs, and waiting runs of a kind the clock may move: those whose time passes. A wait of a kind
   * it does not move (a channel's, a child's) still wakes at its run's deadline (or that deadline's grace
   * end), to which the park brought its wake (an instant of the process, so to the millisecond): that wake
   * moves with the deadline.
   */
  private readonly movable = `(status = 'pending' OR (status = 'waiting' AND (${clockMovesSql('wait_kind')} OR wake_at >= date_trunc('milliseconds', deadline))))`;

  constructor(
    private readonly dataSource: DataSource,
    private readonly tables: Tables,
    private readonly drain: () => Promise<void>,
    private readonly dbClock: DbClock,
    /** The rate-limited queues and their periods: a window opens when its oldest run's start leaves it. */
    private readonly rateWindows: RateWindows,
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

  /** Milliseconds until the earliest future wake of a run that is not executing, or a schedule's next slot; null when none. */
  private async msToNextWake(): Promise<number | null> {
    const scheduleNow = `(now() + $1::bigint * interval '1 millisecond')`;
    const [row] = await this.dataSource.query(
      `SELECT ceil(extract(epoch FROM least(
         (SELECT min(wake_at) - now() FROM ${this.tables.runs} WHERE ${this.movable} AND wake_at > now()),
         (SELECT min(next_fire_at) - ${scheduleNow} FROM ${this.tables.schedules} WHERE next_fire_at > ${scheduleNow}),
         (SELECT min(r.began_at + q.period * interval '1 millisecond') - now()
          FROM unnest($2::text[], $3::bigint[]) q(queue, period) JOIN ${this.tables.runs} r ON r.queue = q.queue
          WHERE r.began_at + q.period * interval '1 millisecond' > now()
            AND EXISTS (SELECT 1 FROM ${this.tables.runs} p WHERE p.queue = q.queue AND p.status = 'pending'))
       )) * 1000)::bigint AS ms`,
      [this.dbClock.shiftMs, this.rateWindows.queues, this.rateWindows.periodsMs],
    );
    return row.ms === null ? null : Math.max(0, Number(row.ms));
  }

  private async shift(ms: number): Promise<void> {
    if (ms <= 0) return;
    this.dbClock.shiftMs += ms;
    const t = this.tables;
    const back = `$1::bigint * interval '1 millisecond'`;
    const shifted = (iso: string) => `to_jsonb(((${iso})::timestamptz - ${back}))`;
    // A select's timer arms, each with its instant, in their order.
    const movedArms = `CASE WHEN jsonb_typeof(wait->'arms') = 'array' THEN jsonb_set(wait, '{arms}', (
        SELECT COALESCE(jsonb_agg(CASE WHEN arm ? 'until' THEN jsonb_set(arm, '{until}', ${shifted(`arm->>'until'`)}) ELSE arm END ORDER BY n), '[]')
        FROM jsonb_array_elements(wait->'arms') WITH ORDINALITY AS arms(arm, n))) ELSE wait END`;
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE ${t.runs}
         SET wake_at = wake_at - ${back},
             wait = ${MOVED_FIELDS.reduce((wait, field) => `CASE WHEN wait ? '${field}' THEN jsonb_set(${wait}, '{${field}}', ${shifted(`wait->>'${field}'`)}) ELSE ${wait} END`, movedArms)}
         WHERE ${this.movable} AND wake_at IS NOT NULL`,
        [ms],
      );
      await manager.query(
        `UPDATE ${t.runs} SET deadline = deadline - ${back} WHERE deadline IS NOT NULL AND status IN ('pending', 'running', 'waiting')`,
        [ms],
      );
      // A debounce's cap (maxDelay from its first start), and the first start a later start's cap counts from
      // (created_at of a debounced run not begun), and the starts a queue's rate window counts.
      await manager.query(`UPDATE ${t.runs} SET debounce_until = debounce_until - ${back} WHERE debounce_until IS NOT NULL`, [ms]);
      await manager.query(
        `UPDATE ${t.runs} SET created_at = created_at - ${back}
         WHERE debounce_key IS NOT NULL AND began_at IS NULL AND status IN ('pending', 'waiting')`,
        [ms],
      );
      if (this.rateWindows.queues.length)
        await manager.query(`UPDATE ${t.runs} SET began_at = began_at - ${back} WHERE queue = ANY($2::text[]) AND began_at IS NOT NULL`, [
          ms,
          this.rateWindows.queues,
        ]);
      await manager.query(
        `UPDATE ${t.steps}
         SET result = json_build_object('$t', 'Date', 'v', ${isoInstantSql(`(result::json->>'v')::timestamptz - ${back}`)})::text
         WHERE kind IN ('sleep', 'deadline')`,
        [ms],
      );
    });
  }
}
