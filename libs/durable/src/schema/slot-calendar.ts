import { cronOf, slotsBetween } from './schedule-spec';

/** A schedule's slots since its last one, up to a pass's now, and the instant it is next due. */
export interface SlotsAfter {
  slots: readonly Date[];
  /** The next slot after them; `now` when the backlog was capped (the next pass goes on with it). */
  next: Date | null;
  /** The backlog was capped: slots up to now remain after these. */
  more: boolean;
}

/**
 * The slot arithmetic of one pass (one database `now`), computed once per cron, timezone and last
 * slot: at a minute boundary thousands of due schedules usually share all three, and each croner
 * next-instant search costs tens of microseconds.
 */
export class SlotCalendar {
  private readonly known = new Map<string, SlotsAfter>();

  constructor(
    readonly now: Date,
    private readonly max: number,
  ) {}

  after(cron: string, timezone: string, lastSlot: Date): SlotsAfter {
    const key = `${timezone}\u0000${cron}\u0000${lastSlot.getTime()}`;
    let found = this.known.get(key);
    if (!found) {
      const pattern = cronOf(cron, timezone);
      // One past the cap tells whether any remain: a backlog of exactly the cap is not more (its newest slot is here).
      const upToOneMore = slotsBetween(pattern, lastSlot, this.now, this.max + 1);
      const more = upToOneMore.length > this.max;
      const slots = more ? upToOneMore.slice(0, this.max) : upToOneMore;
      found = { slots, next: more ? this.now : pattern.nextRun(slots.at(-1) ?? lastSlot), more };
      this.known.set(key, found);
    }
    return found;
  }
}
