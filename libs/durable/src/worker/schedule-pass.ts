import { Injectable } from '@nestjs/common';
import type { ScheduleSkipReason } from '../interfaces';
import type { ScheduleFiring, ScheduledRun, StoredSchedule } from '../persistence/schedule.repository';
import { ScheduleRepository } from '../persistence/schedule.repository';
import { DbClock } from '../runtime/db-clock';
import { cronOf, jitterOf, slotRunId, slotsBetween } from '../schema/schedule-spec';
import { deserialize, serializePayload } from '../schema/serializer';

/** The most slots one schedule moves through in one pass; a longer backlog takes more passes. */
const SLOTS_PER_PASS = 1_000;
const UNFINISHED = new Set(['pending', 'running', 'waiting']);
/**
 * Due schedules one pass transaction fires: its writes are four statements whatever the count, so a
 * minute boundary that makes 10,000 schedules due takes ten transactions, not a hundred.
 */
export const SCHEDULES_PER_TRANSACTION = 1_000;

/**
 * Fires the schedules that are due, from the sweeper's tick: no timer per schedule. Each due schedule's
 * slots since its last slot are computed (croner, in its timezone) against the database's now, then
 * each slot starts its run, or is recorded as skipped with its reason; the schedule advances in the
 * same transaction.
 */
@Injectable()
export class SchedulePass {
  constructor(
    private readonly schedules: ScheduleRepository,
    private readonly clock: DbClock,
  ) {}

  /** Fires everything due, batch after batch; the number of runs started. */
  async run(): Promise<number> {
    const batch = SCHEDULES_PER_TRANSACTION;
    let started = 0;
    for (;;) {
      let seen = 0;
      started += await this.schedules.fire(batch, this.clock.shiftMs, (row, now) => {
        seen++;
        return decide(row, now);
      });
      if (seen < batch) return started;
    }
  }
}

/** What one due schedule does at `now`: the pure rule of catch-up, pause and overlap. */
export function decide(row: StoredSchedule, now: Date): ScheduleFiring {
  const cron = cronOf(row.cron, row.timezone);
  const slots = slotsBetween(cron, row.last_slot, now, SLOTS_PER_PASS);
  const capped = slots.length === SLOTS_PER_PASS;
  const skips: ScheduleFiring['skips'] = [];
  const runs: ScheduledRun[] = [];
  /** The slots whose runs this pass starts, in the order of `runs`. */
  const started: Date[] = [];
  const skip = (slot: Date, reason: ScheduleSkipReason) => skips.push({ slot, reason });
  let lastRunId = row.last_run_id;
  let unfinished = row.last_run_status !== null && UNFINISHED.has(row.last_run_status);
  let buffered = row.buffered_slot;
  let cancel: string | undefined;
  const start = (slot: Date) => {
    const id = slotRunId(row.name, slot);
    const input = serializePayload({ ...deserialize<object>(row.input), scheduledAt: slot }, `Schedule "${row.name}": input`);
    runs.push({ id, input, delayMs: jitterOf(row.name, slot, Number(row.jitter_ms)) });
    started.push(slot);
    lastRunId = id;
    unfinished = true;
  };

  if (row.paused) {
    for (const slot of slots) skip(slot, 'paused');
    buffered = null;
  } else {
    // A buffered slot starts once the run it waited for has ended.
    if (buffered && !unfinished) {
      start(buffered);
      buffered = null;
    }
    const windowStart = now.getTime() - Number(row.catchup_window_ms);
    const inWindow = slots.filter((slot) => slot.getTime() >= windowStart);
    const chosen = row.catchup === 'all' ? inWindow : inWindow.slice(-1);
    for (const slot of slots) {
      if (!chosen.includes(slot)) skip(slot, 'missed');
      else if (!unfinished || row.overlap === 'allow') start(slot);
      else if (row.overlap === 'cancelOther') {
        // The unfinished run is the stored one, or one this pass started (catch-up 'all'): that one is not started after all.
        const previous = started.pop();
        if (previous) {
          runs.pop();
          skip(previous, 'overlap');
        } else cancel = lastRunId ?? undefined;
        start(slot);
      } else if (row.overlap === 'bufferOne' && !buffered) buffered = slot;
      else skip(slot, 'overlap');
    }
  }
  const lastSlot = slots.length ? slots[slots.length - 1] : row.last_slot;
  const next = capped ? now : cron.nextRun(lastSlot);
  // While a slot is buffered, each pass looks whether the run it waits for has ended.
  const nextFireAt = buffered ? now : next;
  return { runs, skips, cancel, lastSlot, nextFireAt, bufferedSlot: buffered, lastRunId };
}
